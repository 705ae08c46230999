"""A brute-force feasibility oracle for tiny clusters, written independently of the solver.

It tries every configuration of every node (whole GPUs, or any MIG layout the catalog's
placement rules allow, projected on the profiles in demand) and, for each, places gangs one by
one by backtracking, honouring device kinds, gang size per node, host memory and CPU, and taints.
Exponential: only for the property tests' fleets of a few nodes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from itertools import combinations_with_replacement, product

from compiler.catalog import enumerate_layouts
from compiler.resolve import Guarantee, ResolvedCluster, ResolvedPool
from compiler.solve.model import host_limits


@dataclass(frozen=True)
class Node:
    pool: ResolvedPool
    index: int
    tainted_gpus: frozenset[str]  # taint names on the one device-tainted GPU (if any)
    node_taints: frozenset[str]


def _nodes(cluster: ResolvedCluster) -> list[Node]:
    found = []
    for pool in cluster.pools:
        for index in range(pool.pool.nodes):
            node_wide: set[str] = set()
            device: set[str] = set()
            for taint in cluster.taints:
                if not taint.blocks_scheduling:
                    continue
                for target in taint.targets:
                    if target.pool.pool.name == pool.pool.name and index in target.node_indices:
                        (node_wide if target.device is None else device).add(taint.name)
            found.append(Node(pool, index, frozenset(device), frozenset(node_wide)))
    return found


def _gpu_choices(node: Node, profiles: set[str]) -> list[tuple[tuple[str, int], ...]]:
    """Per-GPU choices: () is a whole GPU, else (profile, count) pairs of relevant profiles."""
    choices = {()}
    if node.pool.pool.mig != "disabled" and not node.tainted_gpus:
        for layout in enumerate_layouts(node.pool.model):
            relevant = tuple((p, n) for p, n in layout.counts if p in profiles)
            if relevant:
                choices.add(relevant)
    return sorted(choices)


def _node_configs(node: Node, profiles: set[str]) -> list[tuple[tuple[tuple[str, int], ...], ...]]:
    width = node.pool.pool.gpus_per_node
    choices = _gpu_choices(node, profiles)
    if node.pool.pool.mig == "mixed":
        return list(combinations_with_replacement(choices, width))
    return [(choice,) * width for choice in choices]


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
    for configs in product(*(_node_configs(n, profiles) for n in nodes)):
        state = []
        for node, config, host in zip(nodes, configs, hosts, strict=True):
            devices: dict[str, int] = {}
            whole = sum(1 for gpu in config if not gpu)
            for gpu in config:
                for profile, count in gpu:
                    devices[profile] = devices.get(profile, 0) + count
            tainted = min(1, whole) if node.tainted_gpus else 0
            state.append(
                (
                    whole - tainted,
                    tainted,
                    tuple(sorted(devices.items())),
                    host.memory,
                    host.cpu_millis,
                )
            )
        if _place(cluster, nodes, tuple(gangs), tolerant, tuple(state)):
            return True
    return False


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
            clean, tainted, devices, free_memory, free_cpu = state[n]
            if memory > free_memory or cpu > free_cpu or not node.node_taints <= tolerates:
                continue
            for kind in cluster.tier(gang.tier).kinds:
                if kind.pool != node.pool.pool.name:
                    continue
                if kind.profile_name:
                    have = dict(devices)
                    if have.get(kind.profile_name, 0) < gang.gang:
                        continue
                    have[kind.profile_name] -= gang.gang
                    after = (
                        clean,
                        tainted,
                        tuple(sorted(have.items())),
                        free_memory - memory,
                        free_cpu - cpu,
                    )
                else:
                    usable_tainted = tainted if node.tainted_gpus <= tolerates else 0
                    if clean + usable_tainted < gang.gang:
                        continue
                    from_tainted = min(usable_tainted, gang.gang)
                    after = (
                        clean - (gang.gang - from_tainted),
                        tainted - from_tainted,
                        devices,
                        free_memory - memory,
                        free_cpu - cpu,
                    )
                if go(index + 1, (*state[:n], after, *state[n + 1 :])):
                    return True
        return False

    return go(0, state)
