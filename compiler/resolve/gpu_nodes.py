"""GPU nodes kept for GPU work: which node taints a cluster's pools carry, and who tolerates them.

A pool's node taint (`nodeTaint`, by default `gpufleet.dev/gpu=present:NoSchedule`) keeps every
pod that does not tolerate it off the pool's nodes. The pods that may tolerate it are those that
claim devices in a namespace holding quota for a tier with devices in the pool: the solver counts
a GPU node's CPU and memory for the pods of its GPUs (hostMemoryPerGpu, cpuPerGpu), which holds
only while nothing else runs there. Shared by the kubelet drop-ins, the Kueue flavors and the
admission policies, so all three say the same.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from compiler.ir import ResolvedCluster, ResolvedPool
from compiler.model.cluster import NodeTaint
from compiler.resolve.node_names import pool_node_names


@dataclass(frozen=True)
class NodeNames:
    """The node names of one pool: the names it lists, or a prefix and a suffix around the
    node index of its pattern."""

    pool: str
    prefix: str
    suffix: str
    listed: tuple[str, ...] | None = None


def pool_taint(pool: ResolvedPool) -> NodeTaint | None:
    """The taint the pool's nodes register with, if any."""
    return pool.pool.node_taint


def tier_node_taints(cluster: ResolvedCluster, tier: str) -> list[NodeTaint]:
    """The distinct node taints of the pools a tier takes devices from, in pool order."""
    pools = {kind.pool for kind in cluster.tier(tier).kinds}
    found: list[NodeTaint] = []
    for pool in cluster.pools:
        taint = pool_taint(pool)
        if pool.pool.name in pools and taint is not None and taint not in found:
            found.append(taint)
    return found


def node_taints(cluster: ResolvedCluster) -> list[NodeTaint]:
    """Every distinct node taint of the cluster's pools, in pool order."""
    found: list[NodeTaint] = []
    for pool in cluster.pools:
        taint = pool_taint(pool)
        if taint is not None and taint not in found:
            found.append(taint)
    return found


def namespace_node_taints(cluster: ResolvedCluster) -> dict[str, list[NodeTaint]]:
    """Per team namespace holding device quota: the node taints its pods that claim devices
    may tolerate (those of the pools its tiers take devices from)."""
    found: dict[str, list[NodeTaint]] = defaultdict(list)
    for guarantee in cluster.guarantees:
        if guarantee.limit <= 0:
            continue
        for taint in tier_node_taints(cluster, guarantee.tier):
            if taint not in found[guarantee.namespace]:
                found[guarantee.namespace].append(taint)
    return {namespace: taints for namespace, taints in sorted(found.items()) if taints}


def dra_extended_resources(cluster: ResolvedCluster) -> list[str]:
    """The extended resources the cluster's tiers serve through DRA: a pod asking for one gets
    its devices from a claim the scheduler makes, with no `spec.resourceClaims` of its own."""
    return sorted({n for t in cluster.tiers if (n := t.tier.spec.extended_resource_name)})


def tainted_node_names(cluster: ResolvedCluster) -> list[NodeNames]:
    """How the nodes of each tainted pool are named: the names it lists, or the text before
    the first `{index}` of its `nodeNames` and after the last (a pod naming such a node in
    `spec.nodeName` skips the scheduler, and so every NoSchedule taint)."""
    tainted = [pool.pool for pool in cluster.pools if pool_taint(pool) is not None]
    return [
        NodeNames(n.pool.name, n.prefix, n.suffix, n.pool.listed_names)
        for n in sorted(pool_node_names(cluster.cluster, tainted), key=lambda n: n.pool.name)
    ]
