"""An independent checker of written plans (out/plan/<cluster>.json) against the policy.

The plan's placement witness names, node by node, the devices that serve each gang. This
checker verifies it with its own code, importing neither compiler.solve nor the catalog's
layout enumeration: the plan covers every node of every pool; every MIG layout can be placed on
its GPU by the MIG user guide's rules (memory slices from the profile's size, allowed start
slices per instance size, at most 7 compute slices, one `+me`); every device a gang names
exists in its GPU's layout and serves one gang only; a gang has its guarantee's size, devices
its tier selects, all within one group of the tier's match attribute (which the cluster's
driver must publish), and only devices whose blocking taints (a GPU's taint covers its MIG
devices) its team tolerates; host memory and CPU shares fit each node; every guarantee is
served in full; and the plan's per-kind assignments and tier capacities agree with the witness.

`check_plan` returns the problems found (empty when the plan holds).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from compiler.catalog import GpuModel
from compiler.catalog.driver import Scope, attribute, published
from compiler.resolve import Guarantee, ResolvedCluster, ResolvedPool

PLACEMENT_RULES = {
    # memory slices of the GPU -> (compute slices, memory slices) of an instance -> allowed
    # start slices (NVIDIA MIG user guide, "supported MIG profiles" and placement diagrams)
    8: {
        (1, 1): range(0, 7),
        (1, 2): (0, 2, 4, 6),
        (2, 2): (0, 2, 4),
        (3, 4): (0, 4),
        (4, 4): (0,),
        (7, 8): (0,),
    },
    4: {(1, 1): range(0, 4), (2, 2): (0, 2), (4, 4): (0,)},
}
COMPUTE_SLICES = {8: 7, 4: 4}
DEVICE = re.compile(r"^gpu-(\d+)(?:/([0-9a-z.+]+)#(\d+))?$")
PROFILE = re.compile(r"^(\d)g\.(\d+)gb(\+me)?$")
DEFAULT_EVICTION = 100 * 2**20


@dataclass(frozen=True)
class Instance:
    """A MIG profile as its name says: compute slices, size in GB, media extensions."""

    compute: int
    gigabytes: int
    media: bool


def _instance(profile: str) -> Instance:
    match = PROFILE.match(profile)
    if match is None:
        raise ValueError(f"not a MIG profile name: {profile}")
    return Instance(int(match[1]), int(match[2]), bool(match[3]))


def _geometry(model: GpuModel) -> tuple[int, int]:
    """(memory slices, GB of the whole GPU) from the model's profile names: the full-GPU
    profile (7g on 7-compute-slice GPUs, 4g on A30) spans every memory slice."""
    assert model.mig is not None
    names = [_instance(p.name) for p in model.mig.profiles]
    top = max(i.compute for i in names)
    slices = 8 if top == 7 else 4
    return slices, max(i.gigabytes for i in names if i.compute == top)


def layout_fits(model: GpuModel, counts: dict[str, int]) -> bool:
    """Whether the MIG instances can sit on one GPU at once (own backtracking search)."""
    if model.mig is None:
        return False
    known = {p.name for p in model.mig.profiles}
    if not set(counts) <= known:
        return False
    slices, total = _geometry(model)
    rules = PLACEMENT_RULES[slices]
    shapes = []
    for profile, n in counts.items():
        instance = _instance(profile)
        size = max(1, round(instance.gigabytes * slices / total))
        if (instance.compute, size) not in rules:
            return False
        shapes += [(size, tuple(rules[instance.compute, size]))] * n
    infos = [_instance(p) for p, n in counts.items() for _ in range(n)]
    if sum(i.compute for i in infos) > COMPUTE_SLICES[slices] or sum(i.media for i in infos) > 1:
        return False
    shapes.sort(key=lambda s: -s[0])

    def place(index: int, used: frozenset[int]) -> bool:
        if index == len(shapes):
            return True
        size, starts = shapes[index]
        for start in starts:
            cells = frozenset(range(start, start + size))
            if start + size <= slices and not cells & used and place(index + 1, used | cells):
                return True
        return False

    return place(0, frozenset())


def _layout(text: str) -> dict[str, int] | None:
    """`whole` -> None; `2x3g.40gb,1x1g.10gb` -> {3g.40gb: 2, 1g.10gb: 1}."""
    if text == "whole":
        return None
    counts: dict[str, int] = {}
    for part in text.split(","):
        number, profile = part.split("x", 1)
        counts[profile] = counts.get(profile, 0) + int(number)
    return counts


def _expand(runs: list[Any]) -> list[Any]:
    return [value for value, count in runs for _ in range(int(count))]


def _allocatable(cluster: ResolvedCluster, pool: ResolvedPool) -> tuple[int, int]:
    kubelet = cluster.cluster.spec.kubelet
    reserved = (kubelet.system_reserved, kubelet.kube_reserved)
    eviction = kubelet.eviction_hard_memory
    memory = (
        Fraction(pool.pool.host_memory)
        - sum((Fraction(r.memory or 0) for r in reserved), Fraction(0))
        - (DEFAULT_EVICTION if eviction is None else Fraction(eviction))
    )
    cpu = Fraction(pool.pool.cpu) - sum((Fraction(r.cpu or 0) for r in reserved), Fraction(0))
    return math.floor(memory), math.floor(cpu * 1000)


def _group_of(
    cluster: ResolvedCluster, guarantee: Guarantee, pool: ResolvedPool, kind: str
) -> tuple[Scope, int | None, str]:
    """The scope of the tier's match attribute, GPUs per group, and a problem ('' if none)."""
    spec = cluster.tier(guarantee.tier).tier.spec
    name = spec.gang_match_attribute
    width = pool.pool.gpus_per_node
    if name is None or guarantee.gang == 1:
        return Scope.NODE, width, ""
    driver, version = cluster.cluster.spec.driver, cluster.cluster.spec.driver_version
    if name not in published(driver, version, "mig" if kind else "gpu"):
        return Scope.NODE, width, f"{name} is not published by driver {version}"
    found = attribute(driver, name)
    assert found is not None
    if found.scope is Scope.NUMA_NODE:
        size = pool.topology.numa_node
        return found.scope, size.gpus if size else None, ""
    if found.scope is Scope.PCIE_ROOT:
        size = pool.topology.pcie_root
        return found.scope, size.gpus if size else None, ""
    return found.scope, {Scope.NODE: width, Scope.GPU: 1, Scope.DEVICE: 0}[found.scope], ""


def _taints(cluster: ResolvedCluster, pool: ResolvedPool, node: int, gpu: int) -> set[str]:
    """The blocking taints on GPU `gpu` of a node (and so on its MIG devices)."""
    found = set()
    for taint in cluster.taints:
        if not taint.blocks_scheduling:
            continue
        for target in taint.targets:
            if target.pool.pool.name != pool.pool.name or node not in target.node_indices:
                continue
            if target.device is None or target.device == gpu:
                found.add(taint.name)
    return found


def check_plan(cluster: ResolvedCluster, text: str) -> list[str]:
    """The problems of a written plan of `cluster` (empty: the plan holds)."""
    document = json.loads(text)
    problems: list[str] = []
    if document.get("cluster") != cluster.name:
        return [f"plan of cluster {document.get('cluster')!r}, expected {cluster.name!r}"]
    guarantees = {g.key: g for g in cluster.guarantees}
    served: Counter[str] = Counter()
    per_kind: Counter[tuple[str, str]] = Counter()
    offered: Counter[str] = Counter()
    configs = document.get("migConfigs", {})
    for pool in cluster.pools:
        name, width = pool.pool.name, pool.pool.gpus_per_node
        labels = _expand(document["nodeConfigs"].get(name, []))
        nodes = _expand(document.get("placements", {}).get(name, []))
        if len(labels) != pool.pool.nodes or len(nodes) != pool.pool.nodes:
            problems.append(
                f"pool {name}: {len(labels)} labelled and {len(nodes)} placed nodes, "
                f"not {pool.pool.nodes}"
            )
            continue
        memory, cpu = _allocatable(cluster, pool)
        for index, (label, gangs) in enumerate(zip(labels, nodes, strict=True)):
            where = f"pool {name} node {index}"
            gpus = configs.get(label)
            if gpus is None or len(gpus) not in (1, width):
                problems.append(f"{where}: no layout of every GPU for config {label!r}")
                continue
            layouts = [_layout(g) for g in (gpus * width if len(gpus) == 1 else gpus)]
            for gpu, layout in enumerate(layouts):
                if layout is None:
                    offered[f"{name}/gpu"] += 1
                    continue
                if pool.pool.mig == "disabled" or not layout_fits(pool.model, layout):
                    problems.append(f"{where}: GPU {gpu} cannot run MIG layout {gpus}")
                for profile, count in layout.items():
                    offered[f"{name}/mig-{profile}"] += count
            problems += _check_node(
                cluster, pool, index, layouts, gangs, guarantees, (memory, cpu), served, per_kind
            )
    for key, guarantee in guarantees.items():
        if served[key] != guarantee.count:
            problems.append(f"guarantee {key}: {served[key]} devices served, not {guarantee.count}")
        written = document.get("assignments", {}).get(key, {})
        witnessed = {kind: n for (k, kind), n in per_kind.items() if k == key}
        if written != witnessed:
            problems.append(f"guarantee {key}: assignments {written} but placements {witnessed}")
    for tier in cluster.tiers:
        capacity = sum(offered[kind.key] for kind in tier.kinds)
        written_tier = document.get("tiers", {}).get(tier.name, {})
        if written_tier.get("capacity") != capacity:
            problems.append(
                f"tier {tier.name}: capacity {written_tier.get('capacity')}, devices {capacity}"
            )
    return problems


def _check_node(
    cluster: ResolvedCluster,
    pool: ResolvedPool,
    index: int,
    layouts: list[dict[str, int] | None],
    gangs: dict[str, str],
    guarantees: dict[str, Guarantee],
    allocatable: tuple[int, int],
    served: Counter[str],
    per_kind: Counter[tuple[str, str]],
) -> list[str]:
    where = f"pool {pool.pool.name} node {index}"
    problems: list[str] = []
    used: set[str] = set()
    memory = cpu = 0
    width = pool.pool.gpus_per_node
    for key, text in gangs.items():
        guarantee = guarantees.get(key)
        if guarantee is None:
            problems.append(f"{where}: gangs of unknown guarantee {key}")
            continue
        tier = cluster.tier(guarantee.tier)
        tolerated = {t.name for t in cluster.taints if guarantee.team.name in t.tolerated_by}
        for gang in text.split():
            devices = gang.split(",")
            parsed = [DEVICE.match(d) for d in devices]
            if len(devices) != guarantee.gang or None in parsed:
                problems.append(f"{where}: {key} gang {gang} is not {guarantee.gang} devices")
                continue
            kinds = {m[2] or "" for m in parsed if m}
            if len(kinds) != 1:
                problems.append(f"{where}: {key} gang {gang} mixes device kinds")
                continue
            (profile,) = kinds
            kind = f"{pool.pool.name}/{'mig-' + profile if profile else 'gpu'}"
            if kind not in {k.key for k in tier.kinds}:
                problems.append(f"{where}: {key} gang {gang} uses {kind}, not of tier {tier.name}")
            indices = []
            for device, match in zip(devices, parsed, strict=True):
                assert match is not None
                gpu = int(match[1])
                indices.append(gpu)
                layout = layouts[gpu] if gpu < width else {}
                if device in used:
                    problems.append(f"{where}: device {device} serves two gangs")
                used.add(device)
                if gpu >= width:
                    problems.append(f"{where}: no GPU {gpu}")
                elif profile and (layout is None or int(match[3]) >= layout.get(profile, 0)):
                    problems.append(f"{where}: GPU {gpu} holds no {device}")
                elif not profile and layout is not None:
                    problems.append(f"{where}: GPU {gpu} is partitioned, {device} is not whole")
                if gpu < width and not _taints(cluster, pool, index, gpu) <= tolerated:
                    problems.append(f"{where}: {key} does not tolerate the taints of {device}")
            scope, size, unpublished = _group_of(cluster, guarantee, pool, profile)
            if unpublished:
                problems.append(f"{where}: {key}: {unpublished}")
            elif size is None:
                problems.append(f"{where}: {key}: unknown {scope.value} groups on the pool")
            elif size == 0 and len(devices) > 1:
                problems.append(f"{where}: {key} gang {gang} spans devices of one-device groups")
            elif size and len({gpu // size for gpu in indices}) > 1:
                problems.append(f"{where}: {key} gang {gang} spans {scope.value} groups of {size}")
            spec = tier.tier.spec
            memory += math.ceil(spec.host_memory_per_gpu or 0) * len(devices)
            cpu += math.ceil((spec.cpu_per_gpu or 0) * 1000) * len(devices)
            served[key] += len(devices)
            per_kind[key, kind] += len(devices)
    if memory > allocatable[0] or cpu > allocatable[1]:
        problems.append(f"{where}: host shares {memory} B, {cpu} m exceed {allocatable}")
    return problems
