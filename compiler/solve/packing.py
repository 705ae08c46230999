"""Per-node packing patterns (cutting-stock style): which gangs fit together on one node.

An item is one gang: `size` devices of one device kind for a tier with a given host share per
device, usable by teams tolerating a given set of taints. A pattern is a maximal multiset of
items that fits one node of a group in a configuration: devices per kind, host memory and CPU
after reservations, and tainted GPUs only for items that tolerate their taints. Patterns depend
only on those values, so identical node groups across clusters share one enumeration.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

from compiler.solve.groups import NodeGroup
from compiler.solve.shapes import NodeConfig

MAX_PATTERNS = 5_000
"""A bound on patterns per group and configuration; real policies stay far below it."""


class TooManyPatterns(ValueError):
    """The packing of one node group would need more patterns than the bound."""


@dataclass(frozen=True, order=True)
class Item:
    """One gang as a node sees it; host shares per device in bytes and millicores."""

    device: str  # "gpu" or a MIG profile name
    size: int
    host_memory: int
    cpu_millis: int
    tolerates: frozenset[str]


@dataclass(frozen=True)
class HostLimits:
    """What a node's host can give to guaranteed devices: bytes and millicores."""

    memory: int
    cpu_millis: int


Pattern = tuple[tuple[Item, int], ...]
TaintSlots = tuple[tuple[frozenset[str], int], ...]


def taints_fit(slots: TaintSlots, whole_items: list[tuple[Item, int]]) -> bool:
    """Whether gangs of whole GPUs can be matched to GPUs whose taints they tolerate.

    A transportation problem with unbounded edges: by Hall's theorem it is feasible exactly when
    every set of tolerance classes asks for no more GPUs than the GPUs some member may use.
    """
    demand: Counter[frozenset[str]] = Counter()
    for item, count in whole_items:
        demand[item.tolerates] += item.size * count
    classes = sorted(demand, key=sorted)
    for size in range(1, len(classes) + 1):
        for subset in combinations(classes, size):
            usable = sum(n for taints, n in slots if any(taints <= t for t in subset))
            if sum(demand[t] for t in subset) > usable:
                return False
    return True


def patterns(
    group: NodeGroup, config: NodeConfig, host: HostLimits, items: list[Item]
) -> list[Pattern]:
    """Every maximal multiset of `items` that fits one node of `group` in `config`."""
    slots: TaintSlots = ()
    if any(group.device_taints):
        slots = tuple(sorted(Counter(group.device_taints).items(), key=lambda s: sorted(s[0])))
    usable = tuple(sorted(i for i in set(items) if group.node_taints <= i.tolerates))
    return list(_patterns(tuple(config.devices.items()), host, usable, slots))


@lru_cache(maxsize=8192)
def _patterns(
    devices: tuple[tuple[str, int], ...],
    host: HostLimits,
    items: tuple[Item, ...],
    slots: TaintSlots,
) -> tuple[Pattern, ...]:
    capacity = dict(devices)
    items = tuple(
        i
        for i in items
        if capacity.get(i.device, 0) >= i.size
        and i.host_memory * i.size <= host.memory
        and i.cpu_millis * i.size <= host.cpu_millis
    )
    used = {device: 0 for device in capacity}
    counts = [0] * len(items)
    found: list[Pattern] = []
    totals = [0, 0]  # memory, cpu

    def can_add(index: int) -> bool:
        item = items[index]
        if used[item.device] + item.size > capacity[item.device]:
            return False
        if totals[0] + item.host_memory * item.size > host.memory:
            return False
        if totals[1] + item.cpu_millis * item.size > host.cpu_millis:
            return False
        if slots and item.device == "gpu":
            counts[index] += 1
            whole = [(items[j], n) for j, n in enumerate(counts) if n and items[j].device == "gpu"]
            counts[index] -= 1
            return taints_fit(slots, whole)
        return True

    def add(index: int, sign: int) -> None:
        item = items[index]
        counts[index] += sign
        used[item.device] += sign * item.size
        totals[0] += sign * item.host_memory * item.size
        totals[1] += sign * item.cpu_millis * item.size

    def extend(start: int) -> None:
        grew = False
        for index in range(start, len(items)):
            if can_add(index):
                grew = True
                add(index, 1)
                extend(index)
                add(index, -1)
        if not grew and not any(can_add(index) for index in range(start)):
            found.append(tuple((items[j], n) for j, n in enumerate(counts) if n))
            if len(found) > MAX_PATTERNS:
                raise TooManyPatterns(f"over {MAX_PATTERNS} packing patterns for one node shape")

    extend(0)
    return tuple(found) or ((),)
