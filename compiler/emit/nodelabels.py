"""The MIG configuration label of every MIG-capable node, as the plan assigns it.

Written to out/clusters/<cluster>/node-config/, not synced: the labels are set per node
(`nvidia.com/mig.config=<config>`), which makes the GPU operator's MIG manager repartition the
node with the configuration of that name in the mig-parted ConfigMap (emit.mig_parted_configmap).
"""

from __future__ import annotations

from compiler.emit.manifest import Manifest
from compiler.emit.mig_parted_configmap import NODE_CONFIG, has_mig
from compiler.emit.view import ClusterView
from compiler.emit.yaml_writer import comment, document

HOW_TO_APPLY = (
    "The nvidia.com/mig.config label of every MIG-capable node, as gpufleet planned it.",
    "Apply with: kubectl label node NODE nvidia.com/mig.config=CONFIG --overwrite",
    "(the GPU operator's MIG manager then repartitions the node: drain it first).",
)


def emit(view: ClusterView) -> list[Manifest]:
    """The node -> MIG configuration labels of the cluster, if any pool may use MIG."""
    cluster, plan = view.cluster, view.plan
    if not has_mig(cluster):
        return []
    nodes = {
        cluster.node_name(pool, index): label
        for pool in cluster.pools
        for index, label in enumerate(plan.labels(pool.pool.name))
        if pool.pool.mig != "disabled"
    }
    return [
        Manifest(
            kind="NodeLabels",
            name="mig-config",
            builder=build,
            values={"nodes": nodes},
            directory=f"clusters/{cluster.name}/{NODE_CONFIG}",
        )
    ]


def build(manifest: Manifest) -> str:
    """The labels file: how to apply it, then each node's configuration."""
    return comment(*HOW_TO_APPLY) + document({"nodes": manifest.values["nodes"]})
