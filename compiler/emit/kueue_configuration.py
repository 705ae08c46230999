"""The Kueue manager's Configuration fragment: maps each tier's DeviceClass to the logical
resource the cluster's queues count (deviceClassMappings)."""

from __future__ import annotations

from compiler.emit.manifest import MANAGED_BY, Manifest, NamedFile
from compiler.emit.view import ClusterView
from compiler.ir import TEAM_LABEL, tier_resource
from compiler.kueue_versions import kueue_release


def emit(view: ClusterView) -> list[Manifest]:
    """The Kueue manager Configuration fragment, if the cluster runs Kueue.

    Not synced by Argo CD: the Configuration lives in the ConfigMap of the Kueue install,
    which other settings share and which Kueue reads only when it starts, so the platform team
    merges this fragment into its Kueue deployment (Helm values or the ConfigMap) and restarts.
    """
    cluster = view.cluster
    kueue = cluster.cluster.spec.kueue
    if not kueue.enabled:
        return []
    manifest = NamedFile(
        kind="Configuration",
        name="kueue-configuration",
        template="kueue_configuration.yaml.j2",
        values={
            "api_version": kueue_release(kueue.version).configuration_api,
            "version": f"v{kueue.version}",
            "cluster": cluster.name,
            "managed_labels": MANAGED_BY,
            "team_label": TEAM_LABEL,
            "mappings": [
                {"name": tier_resource(t.name), "classes": [t.name]} for t in cluster.tiers
            ],
        },
        directory=f"clusters/{cluster.name}/kueue-config",
        file_name="configuration.yaml",
    )
    return [manifest]
