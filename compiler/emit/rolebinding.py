"""Who may act in a team's namespaces: a RoleBinding of the team's group to the fleet's team
role, in the team's namespaces only.

The group is declared in the team's grant (platform-owned), so a team cannot hand its
namespaces to another group or itself to another team's; the role is a ClusterRole the fleet
names (`edit` by default: workloads and claims, no RBAC, no quota), bound per namespace, so it
reaches nothing outside them. A team whose grant declares no group gets no binding.
"""

from __future__ import annotations

from compiler.emit.manifest import Manifest, provenance
from compiler.emit.view import ClusterView
from compiler.emit.waves import WAVES
from compiler.emit.yaml_writer import object_yaml
from compiler.ir import TEAM_LABEL
from compiler.ir.settings import FleetSettings

BINDING_NAME = "gpufleet-team"
WAVE = WAVES["RoleBinding"]
RBAC_GROUP = "rbac.authorization.k8s.io"
RBAC_VERSION = f"{RBAC_GROUP}/v1"


def emit(view: ClusterView) -> list[Manifest]:
    """A RoleBinding per namespace of every team whose grant declares its group."""
    role = FleetSettings(view.fleet.fleet).team_role
    return [
        Manifest(
            kind="RoleBinding",
            name=BINDING_NAME,
            builder=build,
            values={"role": role, "group": team.spec.group},
            cluster=view.cluster.name,
            namespace=namespace,
            labels={TEAM_LABEL: team.name},
            annotations=provenance(team.grant.source.origin, "group", WAVE),
        )
        for team in view.cluster.teams
        if team.spec.group is not None
        for namespace in team.spec.namespaces
    ]


def build(manifest: Manifest) -> str:
    """A RoleBinding's YAML: the team's group bound to the fleet's ClusterRole."""
    return object_yaml(
        RBAC_VERSION,
        manifest,
        {
            "roleRef": {
                "apiGroup": RBAC_GROUP,
                "kind": "ClusterRole",
                "name": manifest.values["role"],
            },
            "subjects": [
                {"apiGroup": RBAC_GROUP, "kind": "Group", "name": manifest.values["group"]}
            ],
        },
    )
