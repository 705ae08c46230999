"""Per-node packing patterns (cutting-stock style): which gangs fit together on one node.

An item is one gang: `size` devices of one device kind for a tier with a given host share per
device, usable by teams tolerating a given set of taints. A pattern is a maximal multiset of
items that fits one node of a group in a configuration: devices per kind, host memory and CPU
after reservations, and tainted GPUs only for items that tolerate their taints.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations

from compiler.solve.groups import NodeGroup
from compiler.solve.shapes import NodeConfig

MAX_PATTERNS = 5_000
"""A bound on patterns per group and configuration; real policies stay far below it."""


class TooManyPatterns(ValueError):
    """The packing of one node group would need more patterns than the bound."""


@dataclass(frozen=True, order=True)
class Item:
    """One gang as a node sees it."""

    device: str  # "gpu" or a MIG profile name
    size: int
    host_memory: Fraction
    cpu: Fraction
    tolerates: frozenset[str]


@dataclass(frozen=True)
class HostLimits:
    """What a node's host can give to guaranteed devices (allocatable memory and CPU)."""

    memory: Fraction
    cpu: Fraction


Pattern = tuple[tuple[Item, int], ...]


def _fits(group: NodeGroup, config: NodeConfig, host: HostLimits, chosen: Counter[Item]) -> bool:
    used: Counter[str] = Counter()
    memory = cpu = Fraction(0)
    for item, count in chosen.items():
        used[item.device] += item.size * count
        memory += item.host_memory * item.size * count
        cpu += item.cpu * item.size * count
    if any(used[d] > config.devices.get(d, 0) for d in used):
        return False
    if memory > host.memory or cpu > host.cpu:
        return False
    return _taints_fit(group, [(i, n) for i, n in chosen.items() if i.device == "gpu"])


def _taints_fit(group: NodeGroup, whole_items: list[tuple[Item, int]]) -> bool:
    """Whether gangs of whole GPUs can be matched to GPUs whose taints they tolerate.

    A transportation problem with unbounded edges: by Hall's theorem it is feasible exactly when
    every set of tolerance classes asks for no more GPUs than the GPUs some member may use.
    """
    if not any(group.device_taints) or not whole_items:
        return True
    slots: Counter[frozenset[str]] = Counter(group.device_taints)
    demand: Counter[frozenset[str]] = Counter()
    for item, count in whole_items:
        demand[item.tolerates] += item.size * count
    classes = sorted(demand, key=sorted)
    for size in range(1, len(classes) + 1):
        for subset in combinations(classes, size):
            usable = sum(n for taints, n in slots.items() if any(taints <= t for t in subset))
            if sum(demand[t] for t in subset) > usable:
                return False
    return True


def patterns(
    group: NodeGroup, config: NodeConfig, host: HostLimits, items: list[Item]
) -> list[Pattern]:
    """Every maximal multiset of `items` that fits one node of `group` in `config`."""
    usable = sorted(
        i
        for i in set(items)
        if config.devices.get(i.device, 0) >= i.size
        and group.node_taints <= i.tolerates
        and _fits(group, config, host, Counter({i: 1}))
    )
    found: list[Pattern] = []
    chosen: Counter[Item] = Counter()

    def extend(start: int) -> None:
        grew = False
        for index in range(start, len(usable)):
            chosen[usable[index]] += 1
            if _fits(group, config, host, chosen):
                grew = True
                extend(index)
            chosen[usable[index]] -= 1
            if not chosen[usable[index]]:
                del chosen[usable[index]]
        if not grew and _maximal(group, config, host, chosen, usable):
            found.append(tuple(sorted(chosen.items())))
            if len(found) > MAX_PATTERNS:
                raise TooManyPatterns(f"node group {group.key}: over {MAX_PATTERNS} patterns")

    extend(0)
    return found or [()]


def _maximal(
    group: NodeGroup,
    config: NodeConfig,
    host: HostLimits,
    chosen: Counter[Item],
    usable: list[Item],
) -> bool:
    for item in usable:
        chosen[item] += 1
        fits = _fits(group, config, host, chosen)
        chosen[item] -= 1
        if not chosen[item]:
            del chosen[item]
        if fits:
            return False
    return True
