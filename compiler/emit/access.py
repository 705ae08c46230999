"""Who may act in a team's namespaces: a RoleBinding of the team's group to the fleet's team
role, in the team's namespaces only.

The group is declared in the Fleet (platform-owned), so a team cannot hand its namespaces to
another group or itself to another team's; the role is a ClusterRole the fleet names (`edit`
by default: workloads and claims, no RBAC, no quota), bound per namespace, so it reaches
nothing outside them. A team the fleet declares no group for gets no binding.
"""

from __future__ import annotations

from compiler.emit.manifest import Manifest, provenance
from compiler.emit.namespaces import TEAM_LABEL
from compiler.emit.waves import WAVES
from compiler.model.policy import Fleet
from compiler.resolve import ResolvedCluster

BINDING_NAME = "gpufleet-team"
WAVE = WAVES["RoleBinding"]


def role_bindings(cluster: ResolvedCluster, fleet: Fleet | None) -> list[Manifest]:
    """A RoleBinding per namespace of every team with a declared group."""
    if fleet is None:
        return []
    spec = fleet.spec
    return [
        Manifest(
            kind="RoleBinding",
            name=BINDING_NAME,
            template="rolebinding.yaml.j2",
            values={"role": spec.team_role, "group": identity.group},
            cluster=cluster.name,
            namespace=namespace,
            labels={TEAM_LABEL: team.name},
            annotations=provenance(fleet.source.origin, f"teams[{team.name}]", WAVE),
        )
        for team in cluster.teams
        if (identity := spec.teams.get(team.name)) is not None
        for namespace in team.spec.namespaces
    ]
