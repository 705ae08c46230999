"""Enumerate every valid MIG layout of a GPU model from its placement rules.

A layout is a multiset of profiles that can be placed on one GPU at the same time: each
instance starts at one of its profile's allowed memory-slice indices, no two instances share
a memory slice, compute slices add up to at most the GPU's, and at most one `+me` profile.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cache

from compiler.catalog.catalog import GpuModel, MigGeometry, MigProfile


@dataclass(frozen=True, order=True)
class MigLayout:
    """A multiset of MIG profiles on one GPU, as sorted (profile name, count) pairs."""

    counts: tuple[tuple[str, int], ...]

    def count(self, profile: str) -> int:
        """How many instances of `profile` the layout holds."""
        return dict(self.counts).get(profile, 0)

    @property
    def name(self) -> str:
        """A stable, readable name, e.g. `2x1g.10gb,1x2g.20gb,1x3g.40gb`."""
        return ",".join(f"{n}x{p}" for p, n in self.counts)


Placement = tuple[MigProfile, int]


def placements_fit(geometry: MigGeometry, placements: list[Placement]) -> bool:
    """Whether the given (profile, start) placements can coexist on one GPU."""
    used: set[int] = set()
    compute = media = 0
    for profile, start in placements:
        if start not in profile.starts:
            return False
        cells = set(range(start, start + profile.memory_slices))
        if max(cells) >= geometry.memory_slices or used & cells:
            return False
        used |= cells
        compute += profile.compute_slices
        media += profile.media
    return compute <= geometry.compute_slices and media <= 1


def _placement_sets(geometry: MigGeometry) -> list[list[Placement]]:
    """Every non-empty set of placements that fits, found slice by slice."""
    found: list[list[Placement]] = []

    def walk(slice_index: int, chosen: list[Placement], compute: int, media: int) -> None:
        if slice_index >= geometry.memory_slices:
            if chosen:
                found.append(list(chosen))
            return
        walk(slice_index + 1, chosen, compute, media)  # leave this memory slice empty
        for profile in geometry.profiles:
            end = slice_index + profile.memory_slices
            if (
                slice_index in profile.starts
                and end <= geometry.memory_slices
                and compute + profile.compute_slices <= geometry.compute_slices
                and media + profile.media <= 1
            ):
                chosen.append((profile, slice_index))
                walk(end, chosen, compute + profile.compute_slices, media + profile.media)
                chosen.pop()

    walk(0, [], 0, 0)
    return found


@cache
def enumerate_layouts(model: GpuModel) -> tuple[MigLayout, ...]:
    """All distinct valid MIG layouts of `model`, sorted; empty for GPUs without MIG."""
    if model.mig is None:
        return ()
    layouts = {
        MigLayout(tuple(sorted(Counter(p.name for p, _ in chosen).items())))
        for chosen in _placement_sets(model.mig)
    }
    return tuple(sorted(layouts))


def is_maximal(model: GpuModel, layout: MigLayout) -> bool:
    """Whether no profile can be added to `layout` (it is not a strict subset of another)."""
    mine = Counter(dict(layout.counts))
    for other in enumerate_layouts(model):
        theirs = Counter(dict(other.counts))
        if other != layout and all(theirs[p] >= n for p, n in mine.items()):
            return False
    return True
