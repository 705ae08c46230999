"""The Kueue manager's Configuration fragment: maps each tier's DeviceClass to the logical
resource the cluster's queues count (deviceClassMappings)."""

from __future__ import annotations

from compiler.emit.manifest import MANAGED_BY, Manifest, NamedFile
from compiler.emit.view import ClusterView
from compiler.emit.yaml_writer import comment, document
from compiler.ir import TEAM_LABEL, tier_resource
from compiler.kueue_versions import kueue_release

HOW_TO_INSTALL = (
    "Not synced by Argo CD: merge it into the Configuration of your Kueue install (the",
    "kueue-manager-config ConfigMap or the Helm chart's managerConfig) and restart Kueue,",
    "which reads it only when it starts. Jobs without a queue label in the namespaces gpufleet",
    "manages go to the namespace's `default` LocalQueue instead of bypassing every quota.",
)


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
        builder=build,
        values={
            "api_version": kueue_release(kueue.version).configuration_api,
            "version": f"v{kueue.version}",
            "cluster": cluster.name,
            "mappings": [
                {"name": tier_resource(t.name), "deviceClassNames": [t.name]} for t in cluster.tiers
            ],
        },
        directory=f"clusters/{cluster.name}/kueue-config",
        file_name="configuration.yaml",
    )
    return [manifest]


def build(manifest: Manifest) -> str:
    """The fragment: how to install it, then the settings that route every job of a managed
    namespace to a queue and count each tier's devices as its own resource."""
    values = manifest.values
    selector = {
        "matchLabels": MANAGED_BY,
        "matchExpressions": [{"key": TEAM_LABEL, "operator": "Exists"}],
    }
    return comment(
        f"Kueue manager Configuration fragment for cluster {values['cluster']} "
        f"(Kueue {values['version']}), by gpufleet.",
        *HOW_TO_INSTALL,
    ) + document(
        {
            "apiVersion": values["api_version"],
            "kind": manifest.kind,
            "manageJobsWithoutQueueName": True,
            "managedJobsNamespaceSelector": selector,
            "resources": {"deviceClassMappings": values["mappings"]},
        }
    )
