"""The MIG configuration label of every MIG-capable node, as the plan assigns it.

Written to out/clusters/<cluster>/node-config/, not synced: the labels are set per node
(`nvidia.com/mig.config=<config>`), which makes the GPU operator's MIG manager repartition the
node with the configuration of that name in the mig-parted ConfigMap (emit.mig_parted_configmap).
"""

from __future__ import annotations

from compiler.emit.manifest import Manifest
from compiler.emit.mig_parted_configmap import NODE_CONFIG, has_mig
from compiler.emit.view import ClusterView


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
            template="mig-config-labels.yaml.j2",
            values={"nodes": nodes},
            directory=f"clusters/{cluster.name}/{NODE_CONFIG}",
        )
    ]
