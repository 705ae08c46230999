"""What a GPU and a node can be configured as: whole, or MIG layouts, per the catalog's rules.

Only MIG profiles some guarantee can use matter for capacity, so layouts are projected onto those
profiles and dominated projections dropped: an H100 pool serving only 3g.40gb offers the options
`whole` and `2x3g.40gb`, not 127 layouts. A node runs one option on every GPU (`mig: allowed`) or
an option per GPU (`mig: mixed`). Which GPU runs which option matters only up to the node's
symmetries: GPUs with the same taints are interchangeable, and so are groups (a PCIe root, a
NUMA node) whose GPUs carry the same taints, where gangs must stay within such groups. So a
mixed node's configurations are multisets per class of interchangeable GPUs (or groups), laid
out in GPU index order: with no taints and no groups that is one multiset over all GPUs.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import combinations_with_replacement, product

from compiler.catalog import GpuModel, enumerate_layouts
from compiler.resolve import ResolvedPool

WHOLE = "whole"
ALL_DISABLED = "all-disabled"
MAX_NODE_CONFIGS = 2_000
"""A bound on configurations per pool, far above what real policies produce."""


@dataclass(frozen=True, order=True)
class GpuOption:
    """What one GPU runs: whole (`counts` empty) or MIG instances, as (profile, count) pairs."""

    counts: tuple[tuple[str, int], ...]

    @property
    def is_whole(self) -> bool:
        """Whether the GPU is not partitioned."""
        return not self.counts

    @property
    def name(self) -> str:
        """`whole`, or a layout such as `2x3g.40gb` or `1x3g.40gb,2x2g.20gb`."""
        return WHOLE if self.is_whole else ",".join(f"{n}x{p}" for p, n in self.counts)


def option_devices(option: GpuOption) -> dict[str, int]:
    """The devices one GPU offers in `option`: `gpu` when whole, else its MIG instances."""
    return {"gpu": 1} if option.is_whole else dict(option.counts)


@dataclass(frozen=True, order=True)
class NodeConfig:
    """The option of every GPU of a node, in GPU index order."""

    options: tuple[GpuOption, ...]

    @cached_property
    def devices(self) -> dict[str, int]:
        """Devices the node offers: `gpu` for whole GPUs, else the MIG profile name."""
        found: Counter[str] = Counter()
        for option in self.options:
            if option.is_whole:
                found["gpu"] += 1
            for profile, count in option.counts:
                found[profile] += count
        return dict(sorted(found.items()))

    @property
    def whole_gpus(self) -> int:
        """GPUs that are not partitioned."""
        return sum(1 for o in self.options if o.is_whole)

    @property
    def mig_gpus(self) -> int:
        """GPUs in MIG mode."""
        return len(self.options) - self.whole_gpus

    def per_gpu(self) -> tuple[str, ...]:
        """The option of each GPU index; a single entry when every GPU runs the same one."""
        names = tuple(o.name for o in self.options)
        return names[:1] if len(set(names)) == 1 else names

    @cached_property
    def label(self) -> str:
        """The mig-parted config name, also the `nvidia.com/mig.config` label value: runs of
        equal options in GPU index order (`mixed-4of-whole-4of-2x3g.40gb`)."""
        distinct = sorted(set(self.options))
        if distinct == [GpuOption(())]:
            return ALL_DISABLED
        if len(distinct) == 1:
            name = "all-" + "-".join(f"{n}x{p}" for p, n in distinct[0].counts)
        else:
            runs: list[tuple[GpuOption, int]] = []
            for option in self.options:
                if runs and runs[-1][0] == option:
                    runs[-1] = (option, runs[-1][1] + 1)
                else:
                    runs.append((option, 1))
            name = "mixed-" + "-".join(f"{n}of-{o.name.replace(',', '-')}" for o, n in runs)
        name = name.replace("+", ".")
        if len(name) > 63:
            digest = hashlib.sha256(name.encode()).hexdigest()[:12]
            name = f"gpufleet-{digest}"
        return name


def gpu_options(pool: ResolvedPool, profiles: set[str]) -> list[GpuOption]:
    """The options a GPU of `pool` may take, given the MIG profiles guarantees can use."""
    if pool.pool.mig == "disabled" or not profiles:
        return [GpuOption(())]
    return list(_mig_options(pool.model, frozenset(profiles)))


@lru_cache(maxsize=1024)
def _mig_options(model: GpuModel, profiles: frozenset[str]) -> tuple[GpuOption, ...]:
    """Whole, plus the undominated MIG layouts of `model` projected on `profiles`."""
    options = {GpuOption(())}
    if profiles:
        projected = set()
        for layout in enumerate_layouts(model):
            counts = tuple((p, n) for p, n in layout.counts if p in profiles)
            if counts:
                projected.add(counts)
        for counts in projected:
            mine = dict(counts)
            dominated = any(
                other != counts and all(dict(other).get(p, 0) >= n for p, n in mine.items())
                for other in projected
            )
            if not dominated:
                options.add(GpuOption(counts))
    return tuple(sorted(options))


def node_configs(
    pool: ResolvedPool,
    options: list[GpuOption],
    taints: tuple[frozenset[str], ...] = (),
    groups: tuple[int, ...] = (),
) -> list[NodeConfig]:
    """The configurations a node of `pool` may take; for `mig: mixed`, one per way of giving
    options to GPUs up to the node's symmetries: `taints` per GPU index, `groups` the sizes of
    the GPU groups gangs must stay within (consecutive indices, each size dividing the next)."""
    width = pool.pool.gpus_per_node
    if pool.pool.mig != "mixed":
        return [NodeConfig((option,) * width) for option in options]
    sizes = [1, *sorted(s for s in set(groups) if 1 < s < width and width % s == 0), width]
    gpu_taints = taints or (frozenset(),) * width
    count = _count(len(options), gpu_taints, tuple(sizes), 0, len(sizes) - 1)
    if count > MAX_NODE_CONFIGS:
        raise ValueError(
            f"pool {pool.pool.name}: {count} mixed MIG configurations per node; "
            "use `mig: allowed` or fewer MIG tiers on this pool"
        )
    return [
        NodeConfig(c)
        for c in _arrangements(tuple(options), gpu_taints, tuple(sizes), 0, len(sizes) - 1)
    ]


def _children(
    taints: tuple[frozenset[str], ...], sizes: tuple[int, ...], start: int, level: int
) -> list[list[int]]:
    """The starts of a block's children, grouped by their GPUs' taints (interchangeable)."""
    child = sizes[level - 1]
    classes: dict[tuple[frozenset[str], ...], list[int]] = {}
    for at in range(start, start + sizes[level], child):
        classes.setdefault(taints[at : at + child], []).append(at)
    return list(classes.values())


def _count(
    options: int, taints: tuple[frozenset[str], ...], sizes: tuple[int, ...], start: int, level: int
) -> int:
    if level == 0:
        return options
    total = 1
    for starts in _children(taints, sizes, start, level):
        kinds = _count(options, taints, sizes, starts[0], level - 1)
        total *= math.comb(kinds + len(starts) - 1, len(starts))
    return total


def _arrangements(
    options: tuple[GpuOption, ...],
    taints: tuple[frozenset[str], ...],
    sizes: tuple[int, ...],
    start: int,
    level: int,
) -> list[tuple[GpuOption, ...]]:
    """Per-GPU options of the block at `start` of size `sizes[level]`, one per symmetry class."""
    if level == 0:
        return [(option,) for option in options]
    per_class = []
    for starts in _children(taints, sizes, start, level):
        inner = _arrangements(options, taints, sizes, starts[0], level - 1)
        per_class.append(
            [
                dict(zip(starts, (inner[i] for i in chosen), strict=True))
                for chosen in combinations_with_replacement(range(len(inner)), len(starts))
            ]
        )
    found = []
    for parts in product(*per_class):
        placed = {at: block for part in parts for at, block in part.items()}
        found.append(tuple(o for at in sorted(placed) for o in placed[at]))
    return found
