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
import importlib
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import combinations_with_replacement, product
from typing import TYPE_CHECKING, TypeAlias, TypeVar

from compiler.catalog import GpuModel, enumerate_layouts
from compiler.ir import ALL_DISABLED, WHOLE, WHOLE_GPU, ResolvedPool
from compiler.solve.lazy import LazyModule

if TYPE_CHECKING:
    import numpy as np
else:
    np = LazyModule(lambda: importlib.import_module("numpy"))  # with the solver: lazy.py

T = TypeVar("T")
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
    return {WHOLE_GPU: 1} if option.is_whole else dict(option.counts)


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
                found[WHOLE_GPU] += 1
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
    usable: frozenset[frozenset[str]] = frozenset({frozenset()}),
) -> list[NodeConfig]:
    """The configurations a node of `pool` may take; for `mig: mixed`, one per way of giving
    options to GPUs up to the node's symmetries: `taints` per GPU index, `groups` the sizes of
    the GPU groups gangs of more than one device must stay within (consecutive indices, each
    size dividing the next; the node's width for a gang anywhere on the node, 1 for one GPU).

    Where no gang must stay within a block smaller than the node (or a group), only how many
    devices of each kind the block offers on GPUs of each taint matters, not which GPU holds
    them: such blocks keep one arrangement per device count, and none whose counts another
    arrangement matches or exceeds in every kind (it could serve nothing the other cannot).
    Devices of GPUs whose taints are not `usable` (no guarantee tolerates them) count for
    nothing, so such GPUs stay whole there.
    """
    width = pool.pool.gpus_per_node
    if pool.pool.mig != "mixed":
        return [NodeConfig((option,) * width) for option in options]
    sizes = [1, *sorted(s for s in set(groups) if 1 < s < width and width % s == 0), width]
    finest = min((s for s in groups if s < width), default=width)
    gpu_taints = taints or (frozenset(),) * width
    shape = _Shape(tuple(options), gpu_taints, tuple(sizes), finest, usable, pool.pool.name)
    return [NodeConfig(c) for c in shape.arrangements(0, len(sizes) - 1)]


Block = tuple[GpuOption, ...]
Counts: TypeAlias = "np.ndarray"
"""Devices a block offers, one column per (GPU taints, device kind)."""


@dataclass(frozen=True)
class _Shape:
    """What a `mig: mixed` node's configurations are enumerated over."""

    options: tuple[GpuOption, ...]
    taints: tuple[frozenset[str], ...]
    sizes: tuple[int, ...]
    finest: int
    """The smallest group a gang of several devices must stay within."""
    usable: frozenset[frozenset[str]]
    """The GPU taint sets some guarantee tolerates."""
    pool: str

    def arrangements(self, start: int, level: int) -> list[Block]:
        """Per-GPU options of the block at `start` of size `sizes[level]`, one per symmetry
        class (and, where only counts matter, one per undominated count)."""
        if level == 0:
            return [(option,) for option in self.options]
        collapse = self.finest >= self.sizes[level]
        per_class = []
        for starts in self._children(start, level):
            inner = self.arrangements(starts[0], level - 1)
            if collapse:
                chosen = self._undominated_multisets(inner, starts[0], len(starts))
            else:
                self._check_size(math.comb(len(inner) + len(starts) - 1, len(starts)))
                chosen = list(combinations_with_replacement(range(len(inner)), len(starts)))
            per_class.append(
                [dict(zip(starts, (inner[i] for i in c), strict=True)) for c in chosen]
            )
        self._check_size(math.prod(len(c) for c in per_class))
        found = []
        for parts in product(*per_class):
            placed = {at: block for part in parts for at, block in part.items()}
            found.append(tuple(o for at in sorted(placed) for o in placed[at]))
        return self._undominated(found, start) if collapse else found

    def _children(self, start: int, level: int) -> list[list[int]]:
        """The starts of a block's children, grouped by their GPUs' taints (interchangeable)."""
        child = self.sizes[level - 1]
        classes: dict[tuple[frozenset[str], ...], list[int]] = {}
        for at in range(start, start + self.sizes[level], child):
            classes.setdefault(self.taints[at : at + child], []).append(at)
        return list(classes.values())

    @cached_property
    def _kinds(self) -> dict[tuple[frozenset[str], str], int]:
        """An index per (GPU taints, device kind) the node can offer."""
        kinds = sorted({kind for option in self.options for kind in option_devices(option)})
        taints = sorted(set(self.taints) & self.usable, key=sorted)
        return {(t, kind): i for i, (t, kind) in enumerate(product(taints, kinds))}

    def _counts(self, block: Block, start: int) -> Counts:
        """Devices the block at `start` offers, per (GPU taints, device kind)."""
        found = np.zeros(len(self._kinds), dtype=np.int64)
        for taints, option in zip(self.taints[start:], block, strict=False):
            if taints in self.usable:
                for kind, count in option_devices(option).items():
                    found[self._kinds[taints, kind]] += count
        return found

    def _undominated_multisets(
        self, inner: list[Block], start: int, copies: int
    ) -> list[tuple[int, ...]]:
        """Multisets of `copies` indices into `inner` (children alike in taints), one per
        undominated sum of counts: built child by child, pruning as it goes (a sum dominated
        now stays dominated whatever is added to it)."""
        counts = np.array([self._counts(block, start) for block in inner]).reshape(
            len(inner), len(self._kinds)
        )
        sums = np.zeros((1, len(self._kinds)), dtype=np.int64)
        picks: list[tuple[int, ...]] = [()]
        for _ in range(copies):
            grown = (sums[:, None, :] + counts[None, :, :]).reshape(
                len(picks) * len(inner), len(self._kinds)
            )
            chosen = [tuple(sorted((*p, i))) for p in picks for i in range(len(inner))]
            kept = _pareto(grown, chosen)
            self._check_size(len(kept))
            sums, picks = grown[kept], [chosen[i] for i in kept]
        return sorted(picks)

    def _undominated(self, blocks: list[Block], start: int) -> list[Block]:
        counts = np.array([self._counts(block, start) for block in blocks]).reshape(
            len(blocks), len(self._kinds)
        )
        return [blocks[i] for i in sorted(_pareto(counts, list(range(len(blocks)))))]

    def _check_size(self, count: int) -> None:
        if count > MAX_NODE_CONFIGS:
            raise ValueError(
                f"pool {self.pool}: over {MAX_NODE_CONFIGS} mixed MIG configurations per node; "
                "use `mig: allowed`, fewer MIG tiers on this pool, or gangs that may use the "
                "whole node"
            )


def _pareto(counts: np.ndarray, labels: Sequence[T]) -> list[int]:
    """Rows of `counts` no other row matches or exceeds in every column: the first (by
    smallest label) of each set of equal rows. A row is dominated only by rows of larger sum,
    so rows are tried by decreasing sum against those kept so far."""
    first: dict[bytes, int] = {}
    for index, row in enumerate(counts):
        key = row.tobytes()
        if key not in first or labels[index] < labels[first[key]]:  # type: ignore[operator]
            first[key] = index
    rows = sorted(first.values(), key=lambda i: (-int(counts[i].sum()), labels[i]))
    front = np.empty((len(rows), counts.shape[1]), dtype=counts.dtype)
    kept: list[int] = []
    for index in rows:
        if kept and bool(np.all(front[: len(kept)] >= counts[index], axis=1).any()):
            continue
        front[len(kept)] = counts[index]
        kept.append(index)
    return kept
