"""Place gangs of one device kind on one node, each within one group of its match attribute.

A node's devices of one kind sit on its GPUs (a whole GPU is one device, a MIG GPU holds its
layout's instances of the profile), and each GPU carries its own taints. A gang of `size`
devices must lie within one group of `within` consecutive GPUs (the node, a NUMA node, a PCIe
root, one GPU) and take only devices whose taints its team tolerates. The group sizes in use
nest (each divides the next), so gangs are placed from the finest groups up: once the finer
gangs sit, a coarser one sees only how many devices of each taint class each group has left.
Exact, by backtracking over those counts with a memo of dead ends; a node has at most 16 GPUs.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import pairwise

Gpus = tuple[tuple[frozenset[str], int], ...]
"""Per GPU index: its taints and how many devices of the kind it holds."""
Gang = tuple[int, int, frozenset[str]]
"""A gang: devices, GPUs per group it must stay within (0: one device), taints it tolerates."""
State = tuple[tuple[int, ...], ...]
"""Per group of the current size: devices left per taint class."""
Choice = tuple[int, int, int, tuple[int, ...]]
"""A placed gang: its index, the group size, the group's index, devices taken per class."""


class GroupsDoNotNest(ValueError):
    """Two group sizes of one node where neither divides the other."""


def fits(gpus: Gpus, gangs: tuple[Gang, ...]) -> bool:
    """Whether every gang can be placed at once."""
    return _search(gpus, gangs) is not None


def placement(gpus: Gpus, gangs: tuple[Gang, ...]) -> tuple[tuple[int, ...], ...] | None:
    """For each gang, in the order given, the GPU index of every device it takes (a GPU index
    repeats for several MIG devices of one GPU); None when the gangs do not all fit."""
    found = _search(gpus, gangs)
    if found is None:
        return None
    classes, choices = found
    free = [count for _, count in gpus]
    taken: dict[int, list[int]] = {}
    for index, size, block, counts in choices:
        devices: list[int] = []
        for cls, want in enumerate(counts):
            for gpu in range(block * size, (block + 1) * size):
                if want and gpus[gpu][0] == classes[cls] and free[gpu]:
                    take = min(want, free[gpu])
                    free[gpu] -= take
                    want -= take
                    devices.extend([gpu] * take)
        taken[index] = devices
    return tuple(tuple(taken[i]) for i in range(len(gangs)))


@lru_cache(maxsize=65536)
def _search(
    gpus: Gpus, gangs: tuple[Gang, ...]
) -> tuple[tuple[frozenset[str], ...], tuple[Choice, ...]] | None:
    width = len(gpus)
    classes = tuple(sorted({t for t, n in gpus if n}, key=sorted))
    normal = [
        (size, width if size == 1 or within >= width else within, tol)
        for size, within, tol in gangs
    ]
    if any(within == 0 for _, within, _ in normal):
        return None  # more than one device kept on one device
    levels = sorted({within for _, within, _ in normal} | {width})
    for finer, coarser in pairwise(levels):
        if coarser % finer:
            raise GroupsDoNotNest(f"GPU groups of {finer} and {coarser} on one node do not nest")
    order = sorted(
        range(len(gangs)), key=lambda i: (normal[i][1], -normal[i][0], sorted(normal[i][2]))
    )
    plan = [
        (
            i,
            levels.index(normal[i][1]),
            normal[i][0],
            tuple(k for k, c in enumerate(classes) if c <= normal[i][2]),
        )
        for i in order
    ]
    start = levels[0]
    state: State = tuple(
        tuple(sum(n for taints, n in gpus[b : b + start] if taints == cls) for cls in classes)
        for b in range(0, width, start)
    )
    dead: set[tuple[int, int, State]] = set()

    def go(position: int, level: int, state: State) -> tuple[Choice, ...] | None:
        if position == len(plan):
            return ()
        index, want_level, size, usable = plan[position]
        while level < want_level:  # merge groups into the next size up
            factor = levels[level + 1] // levels[level]
            state = tuple(
                tuple(map(sum, zip(*state[b : b + factor], strict=True)))
                for b in range(0, len(state), factor)
            )
            level += 1
        key = (position, level, state)
        if key in dead:
            return None
        parent = (levels[level + 1] // levels[level]) if level + 1 < len(levels) else len(state)
        tried: set[tuple[int, tuple[int, ...]]] = set()
        for block, left in enumerate(state):
            if (block // parent, left) in tried or sum(left[k] for k in usable) < size:
                continue
            tried.add((block // parent, left))
            for counts in _splits(size, usable, left):
                after = tuple(a - c for a, c in zip(left, counts, strict=True))
                rest = go(position + 1, level, (*state[:block], after, *state[block + 1 :]))
                if rest is not None:
                    return ((index, levels[level], block, counts), *rest)
        dead.add(key)
        return None

    choices = go(0, 0, state)
    return None if choices is None else (classes, choices)


def _splits(size: int, usable: tuple[int, ...], left: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Every way to take `size` devices from the usable taint classes of a group."""
    found: list[tuple[int, ...]] = []
    counts = [0] * len(left)

    def walk(at: int, need: int) -> None:
        if need == 0:
            found.append(tuple(counts))
            return
        if at == len(usable):
            return
        cls = usable[at]
        for take in range(min(need, left[cls]), -1, -1):
            counts[cls] = take
            walk(at + 1, need - take)
        counts[cls] = 0

    walk(0, size)
    return found
