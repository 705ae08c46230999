"""MIG layouts by the placement tables of tests/oracle_gpus.py: whether a set of instances can
sit on one GPU, and every set that can (the oracle's own search, not compiler/catalog's).

An instance takes its slot's memory slices from one of its allowed starts; instances on one
GPU may not overlap in memory slices, use at most the GPU's compute slices, and at most one
holds the media extensions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from functools import cache

from tests.oracle_gpus import MAX_MEDIA_INSTANCES, Gpu

Layout = tuple[tuple[str, int], ...]
"""A MIG layout: (profile name, instances) pairs sorted by name, each count positive."""


def fits(model: Gpu, counts: Mapping[str, int]) -> bool:
    """Whether `counts` instances of each profile can be placed on one GPU of `model` at once."""
    wanted = {name: n for name, n in counts.items() if n}
    if model.geometry is None or any(model.profile(name) is None for name in wanted):
        return False
    return _layout(wanted) in layouts(model)


def _layout(counts: Mapping[str, int]) -> Layout:
    return tuple(sorted((name, n) for name, n in counts.items() if n))


@cache
def layouts(model: Gpu) -> frozenset[Layout]:
    """Every non-empty layout a GPU of `model` can run."""
    geometry = model.geometry
    if geometry is None:
        return frozenset()
    places = [
        (profile.name, start, geometry.slots[profile.slot])
        for profile in model.profiles
        for start in geometry.slots[profile.slot].starts
        if start + geometry.slots[profile.slot].size <= geometry.memory_slices
    ]
    found: set[Layout] = set()

    def walk(at: int, used: frozenset[int], compute: int, media: int, taken: Counter[str]) -> None:
        if taken:
            found.add(_layout(taken))
        for index in range(at, len(places)):
            name, start, slot = places[index]
            cells = frozenset(range(start, start + slot.size))
            if cells & used or compute + slot.compute > geometry.compute_slices:
                continue
            if slot.media and media >= MAX_MEDIA_INSTANCES:
                continue
            taken[name] += 1
            walk(index + 1, used | cells, compute + slot.compute, media + slot.media, taken)
            taken[name] -= 1
            if not taken[name]:
                del taken[name]

    walk(0, frozenset(), 0, 0, Counter())
    return frozenset(found)
