"""Split each pool's nodes into groups that look alike to the solver (same device taints).

Nodes of a pool with no taints form one group, however many there are; a taint on node 3,
device 5 puts node 3 in a group of its own. Variables are per group, never per node.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from compiler.ir import GroupKey, ResolvedCluster, ResolvedPool, ResolvedTaint

Signature = tuple[frozenset[str], tuple[frozenset[str], ...]]


@dataclass(frozen=True)
class NodeGroup:
    """Nodes of one pool with the same taints.

    `node_taints` cover every device of each node (MIG devices included); `device_taints[i]`
    are the extra taints on GPU i: on the whole GPU `gpu-i`, and on every MIG device it holds
    when partitioned (its DeviceTaintRule names them all).
    """

    pool: ResolvedPool
    nodes: tuple[int, ...]
    node_taints: frozenset[str]
    device_taints: tuple[frozenset[str], ...]
    key: GroupKey

    @property
    def count(self) -> int:
        """How many nodes the group holds."""
        return len(self.nodes)

    @property
    def allows_mig(self) -> bool:
        """Whether the nodes' GPUs may be partitioned (tainted ones too: their MIG devices
        carry the taint)."""
        return self.pool.pool.mig != "disabled"

    @property
    def taints(self) -> frozenset[str]:
        """Every taint present on the group's devices."""
        return self.node_taints.union(*self.device_taints)


def node_groups(cluster: ResolvedCluster, active: frozenset[str] | None = None) -> list[NodeGroup]:
    """The cluster's node groups, counting only blocking taints (and only `active` ones)."""
    taints = [
        t for t in cluster.taints if t.blocks_scheduling and (active is None or t.name in active)
    ]
    groups: list[NodeGroup] = []
    for pool in cluster.pools:
        signatures: dict[Signature, list[int]] = defaultdict(list)
        width = pool.pool.gpus_per_node
        per_node = _taints_by_node(pool, taints)
        if not per_node:  # no taint here: one group, however many nodes
            clean: tuple[frozenset[str], ...] = (frozenset(),) * width
            groups.append(
                NodeGroup(
                    pool,
                    tuple(range(pool.pool.nodes)),
                    frozenset(),
                    clean,
                    GroupKey(pool.pool.name),
                )
            )
            continue
        untainted: Signature = (frozenset(), (frozenset(),) * width)
        for index in range(pool.pool.nodes):
            if index not in per_node:  # most nodes: no taint, one shared signature
                signatures[untainted].append(index)
                continue
            node_wide, per_device = per_node[index]
            devices = tuple(frozenset(per_device.get(i, ())) for i in range(width))
            signatures[(node_wide, devices)].append(index)
        ordered = sorted(signatures.items(), key=lambda item: item[1][0])
        for number, ((node_wide, devices), nodes) in enumerate(ordered):
            key = GroupKey(pool.pool.name, number)
            groups.append(NodeGroup(pool, tuple(nodes), node_wide, devices, key))
    return groups


def _taints_by_node(
    pool: ResolvedPool, taints: list[ResolvedTaint]
) -> dict[int, tuple[frozenset[str], dict[int, set[str]]]]:
    node_wide: dict[int, set[str]] = defaultdict(set)
    per_device: dict[int, dict[int, set[str]]] = defaultdict(lambda: defaultdict(set))
    for taint in taints:
        for target in taint.targets:
            if target.pool.pool.name != pool.pool.name:
                continue
            for index in target.node_indices:
                if target.device is None:
                    node_wide[index].add(taint.name)
                else:
                    per_device[index][target.device].add(taint.name)
    return {
        index: (frozenset(node_wide.get(index, ())), dict(per_device.get(index, {})))
        for index in set(node_wide) | set(per_device)
    }
