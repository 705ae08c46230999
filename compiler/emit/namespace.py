"""Team namespaces: one Namespace per namespace of every team in the cluster."""

from __future__ import annotations

from compiler.emit.manifest import Manifest, provenance
from compiler.emit.view import ClusterView
from compiler.emit.waves import WAVES
from compiler.emit.yaml_writer import object_yaml
from compiler.ir import TEAM_LABEL
from compiler.ir.sync_options import KEEP_ON_REMOVAL

WAVE_NAMESPACES = WAVES["Namespace"]
"""DeviceClasses the driver installs itself; quota 0 so no team bypasses the tiers."""
POD_SECURITY_LABEL = "pod-security.kubernetes.io/enforce"


def emit(view: ClusterView) -> list[Manifest]:
    """A Namespace per namespace of every team present in the cluster, enforcing the team's
    Pod Security Standard (its grant's, else the fleet's, at the cluster's version); Argo CD
    never deletes one (KEEP_ON_REMOVAL), so dropping a team from the policy leaves its
    workloads running. Only the namespaces of teams with `adminAccess` carry the label the
    version's DRA requires for adminAccess claims (Target `admin_access_label`)."""
    cluster = view.cluster
    version = f"v{cluster.cluster.spec.kubernetes_version}"
    admin_label = cluster.target.admin_access_label
    return [
        Manifest(
            kind="Namespace",
            name=namespace,
            builder=build,
            values={},
            cluster=cluster.name,
            labels={
                TEAM_LABEL: team.name,
                POD_SECURITY_LABEL: team.spec.pod_security,
                f"{POD_SECURITY_LABEL}-version": version,
            }
            | ({admin_label: "true"} if admin_label and team.spec.admin_access else {}),
            annotations=provenance(
                team.grant.source.origin, f"namespaces[{namespace}]", WAVE_NAMESPACES
            )
            | KEEP_ON_REMOVAL,
        )
        for team in cluster.teams
        for namespace in team.spec.namespaces
    ]


def build(manifest: Manifest) -> str:
    """A Namespace's YAML: it has nothing but metadata."""
    return object_yaml("v1", manifest, {})
