"""A brute-force feasibility oracle for tiny clusters, written independently of the solver.

It tries every configuration of every node (whole GPUs, or any MIG layout the catalog's
placement rules allow, projected on the profiles in demand; with `mig: mixed` every layout on
every GPU index) and, for each, places gangs one by one by backtracking over concrete GPUs:
device kinds, host memory and CPU, node and GPU taints (a GPU's taint covers its MIG devices),
and the group a gang must stay within (its tier's match attribute: the node, a NUMA node or
PCIe root of consecutive GPU indices, one GPU, one device). Exponential: only for the property
tests' fleets of a few nodes.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from itertools import combinations_with_replacement, product

from compiler.catalog import enumerate_layouts
from compiler.resolve import Guarantee, ResolvedCluster, ResolvedPool
from compiler.solve.model import host_limits

GPU_SCOPED = {"gpu.nvidia.com/parentUUID", "resource.kubernetes.io/pciBusID"}


@dataclass(frozen=True)
class Node:
    pool: ResolvedPool
    index: int
    gpu_taints: tuple[frozenset[str], ...]
    node_taints: frozenset[str]


def _nodes(cluster: ResolvedCluster) -> list[Node]:
    found = []
    for pool in cluster.pools:
        width = pool.pool.gpus_per_node
        for index in range(pool.pool.nodes):
            node_wide: set[str] = set()
            per_gpu: list[set[str]] = [set() for _ in range(width)]
            for taint in cluster.taints:
                if not taint.blocks_scheduling:
                    continue
                for target in taint.targets:
                    if target.pool.pool.name != pool.pool.name or index not in target.node_indices:
                        continue
                    if target.device is None:
                        node_wide.add(taint.name)
                    else:
                        per_gpu[target.device].add(taint.name)
            found.append(
                Node(pool, index, tuple(frozenset(t) for t in per_gpu), frozenset(node_wide))
            )
    return found


def _gpu_choices(node: Node, profiles: set[str]) -> list[tuple[tuple[str, int], ...]]:
    """Per-GPU choices: () is a whole GPU, else (profile, count) pairs of relevant profiles.
    A layout whose relevant devices another layout also offers (and more) is left out: more
    devices never make a placement impossible."""
    projected = set()
    if node.pool.pool.mig != "disabled":
        for layout in enumerate_layouts(node.pool.model):
            relevant = tuple((p, n) for p, n in layout.counts if p in profiles)
            if relevant:
                projected.add(relevant)
    kept = {
        mine
        for mine in projected
        if not any(
            other != mine and all(dict(other).get(p, 0) >= n for p, n in mine)
            for other in projected
        )
    }
    return sorted(kept | {()})


Config = tuple[tuple[tuple[str, int], ...], ...]


def _node_configs(node: Node, profiles: set[str]) -> list[Config]:
    width = node.pool.pool.gpus_per_node
    choices = _gpu_choices(node, profiles)
    if node.pool.pool.mig != "mixed":
        return [(choice,) * width for choice in choices]
    if len(set(node.gpu_taints)) == 1 and width <= 2:  # the GPUs are interchangeable
        return list(combinations_with_replacement(choices, width))
    return list(product(choices, repeat=width))


def _cluster_configs(nodes: list[Node], profiles: set[str]) -> Iterator[tuple[Config, ...]]:
    """Every configuration of every node; nodes of a pool with the same taints are
    interchangeable, so they take a multiset of configurations."""
    classes: dict[tuple[str, tuple[frozenset[str], ...], frozenset[str]], list[int]] = {}
    for index, node in enumerate(nodes):
        key = (node.pool.pool.name, node.gpu_taints, node.node_taints)
        classes.setdefault(key, []).append(index)
    members = list(classes.values())
    options = [
        list(combinations_with_replacement(_node_configs(nodes[m[0]], profiles), len(m)))
        for m in members
    ]
    for chosen in product(*options):
        configs: list[Config] = [()] * len(nodes)
        for indices, picks in zip(members, chosen, strict=True):
            for index, config in zip(indices, picks, strict=True):
                configs[index] = config
        yield tuple(configs)


def group_size(cluster: ResolvedCluster, guarantee: Guarantee, pool: ResolvedPool) -> int:
    """GPUs per group a gang of the guarantee must stay within on `pool` (0: one device)."""
    width = pool.pool.gpus_per_node
    attribute = cluster.tier(guarantee.tier).tier.spec.gang_match_attribute
    if guarantee.gang == 1 or attribute is None:
        return width
    if attribute.endswith("/uuid"):
        return 0
    if attribute in GPU_SCOPED:
        return 1
    topology = pool.topology
    if attribute == "resource.kubernetes.io/numaNode" and topology.numa_node:
        return topology.numa_node.gpus
    if attribute == "resource.kubernetes.io/pcieRoot" and topology.pcie_root:
        return topology.pcie_root.gpus
    return width  # productName and the like: every device of the node


def feasible(cluster: ResolvedCluster) -> bool:
    """Whether every guarantee of the cluster can be served at once."""
    nodes = _nodes(cluster)
    profiles = {
        k.profile_name
        for g in cluster.guarantees
        for k in cluster.tier(g.tier).kinds
        if k.profile_name
    }
    gangs: list[Guarantee] = sorted(
        (g for g in cluster.guarantees for _ in range(g.count // g.gang)),
        key=lambda g: (-g.gang, g.key),
    )
    tolerant = {
        g.key: frozenset(t.name for t in cluster.taints if g.team.name in t.tolerated_by)
        for g in cluster.guarantees
    }
    hosts = [host_limits(cluster, node.pool) for node in nodes]
    for configs in _cluster_configs(nodes, profiles):
        state = tuple(
            (
                _canonical(
                    node.pool,
                    tuple(
                        (taints, (("gpu", 1),) if not gpu else tuple(sorted(gpu)))
                        for taints, gpu in zip(node.gpu_taints, config, strict=True)
                    ),
                ),
                host.memory,
                host.cpu_millis,
            )
            for node, config, host in zip(nodes, configs, hosts, strict=True)
        )
        if _place(cluster, nodes, tuple(gangs), tolerant, state):
            return True
    return False


def _order(block: tuple) -> list:  # type: ignore[type-arg]
    return [(sorted(taints), held) for taints, held in block]


def _canonical(pool: ResolvedPool, gpus: tuple) -> tuple:  # type: ignore[type-arg]
    """The node's GPUs (taints, devices left) up to its symmetries: sibling PCIe roots, NUMA
    nodes and GPUs within them may be swapped, so each block's children are sorted."""
    width = pool.pool.gpus_per_node
    sizes = sorted(
        {g.gpus for g in (pool.topology.numa_node, pool.topology.pcie_root) if g}
        & set(range(2, width))
    )
    blocks = [(gpu,) for gpu in gpus]
    for size in [*sizes, width]:
        step = size // (len(gpus) // len(blocks))
        blocks = [
            tuple(b for child in sorted(blocks[i : i + step], key=_order) for b in child)
            for i in range(0, len(blocks), step)
        ]
    return blocks[0]


def _take(free: tuple, kind: str, gpus: list[int], want: int) -> list[tuple]:  # type: ignore[type-arg]
    """Every way to take `want` devices of `kind` from the given GPUs: the new per-GPU state."""
    results = []

    def walk(at: int, need: int, current: list) -> None:  # type: ignore[type-arg]
        if need == 0:
            results.append(tuple(current))
            return
        if at == len(gpus):
            return
        gpu = gpus[at]
        taints, held = current[gpu]
        for take in range(min(need, dict(held).get(kind, 0)), -1, -1):
            left = dict(held)
            if take:
                left[kind] -= take
            current[gpu] = (taints, tuple(sorted(left.items())))
            walk(at + 1, need - take, current)
        current[gpu] = (taints, held)

    walk(0, want, list(free))
    return results


def _place(cluster, nodes, gangs, tolerant, state) -> bool:  # type: ignore[no-untyped-def]
    @cache
    def go(index: int, state: tuple) -> bool:  # type: ignore[type-arg]
        if index == len(gangs):
            return True
        gang = gangs[index]
        spec = cluster.tier(gang.tier).tier.spec
        memory = math.ceil(spec.host_memory_per_gpu or 0) * gang.gang
        cpu = math.ceil((spec.cpu_per_gpu or 0) * 1000) * gang.gang
        tolerates = tolerant[gang.key]
        for n, node in enumerate(nodes):
            free, free_memory, free_cpu = state[n]
            if memory > free_memory or cpu > free_cpu or not node.node_taints <= tolerates:
                continue
            width = node.pool.pool.gpus_per_node
            size = group_size(cluster, gang, node.pool)
            if size == 0:
                continue  # a gang of several devices never shares one device value
            usable = [i for i in range(width) if free[i][0] <= tolerates]
            for kind in cluster.tier(gang.tier).kinds:
                if kind.pool != node.pool.pool.name:
                    continue
                device = kind.profile_name or "gpu"
                for start in range(0, width, size):
                    block = [i for i in usable if start <= i < start + size]
                    for after in _take(free, device, block, gang.gang):
                        moved = (_canonical(node.pool, after), free_memory - memory, free_cpu - cpu)
                        if go(index + 1, (*state[:n], moved, *state[n + 1 :])):
                            return True
        return False

    return go(0, state)
