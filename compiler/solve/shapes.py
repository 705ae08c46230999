"""What a GPU and a node can be configured as: whole, or MIG layouts, per the catalog's rules.

Only MIG profiles some guarantee can use matter for capacity, so layouts are projected onto those
profiles and dominated projections dropped: an H100 pool serving only 3g.40gb offers the options
`whole` and `2x3g.40gb`, not 127 layouts. A node runs one option on every GPU (`mig: allowed`) or
a multiset of options (`mig: mixed`).
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import combinations_with_replacement

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


@dataclass(frozen=True, order=True)
class NodeConfig:
    """The options of every GPU of a node, sorted (a multiset)."""

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
        """The mig-parted config name, also the `nvidia.com/mig.config` label value."""
        distinct = sorted(set(self.options))
        if distinct == [GpuOption(())]:
            return ALL_DISABLED
        if len(distinct) == 1:
            name = "all-" + "-".join(f"{n}x{p}" for p, n in distinct[0].counts)
        else:
            name = "mixed-" + "-".join(
                f"{sum(1 for o in self.options if o == d)}of-{d.name.replace(',', '-')}"
                for d in distinct
            )
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


def node_configs(pool: ResolvedPool, options: list[GpuOption]) -> list[NodeConfig]:
    """The configurations a node of `pool` may take."""
    width = pool.pool.gpus_per_node
    if pool.pool.mig == "mixed":
        count = math.comb(len(options) + width - 1, width)
        if count > MAX_NODE_CONFIGS:
            raise ValueError(
                f"pool {pool.pool.name}: {count} mixed MIG configurations per node; "
                "use `mig: allowed` or fewer MIG tiers on this pool"
            )
        return [NodeConfig(tuple(c)) for c in combinations_with_replacement(options, width)]
    return [NodeConfig((option,) * width) for option in options]
