"""Per-node packing patterns (cutting-stock style): which gangs fit together on one node.

An item is one gang: `size` devices of one device kind for a tier with a given host share per
device, usable by teams tolerating a given set of taints, kept within one group of `within`
GPUs (its tier's match attribute: a PCIe root, a NUMA node, one GPU, else the whole node). A
pattern is a maximal multiset of items that fits one node of a group in a configuration:
devices per kind, host memory and CPU after reservations, tainted devices (whole GPUs and the
MIG devices of tainted GPUs) only for items that tolerate their taints, and every gang within
one group (compiler.solve.placement). Patterns depend only on those values, so identical node
groups across clusters share one enumeration.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from compiler.solve.groups import NodeGroup
from compiler.solve.node_options import NodeConfig, option_devices
from compiler.solve.placement import Gang, Gpus, fits

MAX_PATTERNS = 5_000
"""A bound on patterns per group and configuration; real policies stay far below it."""


class TooManyPatterns(ValueError):
    """The packing of one node group would need more patterns than the bound."""


@dataclass(frozen=True, order=True)
class Item:
    """One gang as a node sees it; host shares per device in bytes and millicores."""

    device: str  # WHOLE_GPU ("gpu") or a MIG profile name
    size: int
    host_memory: int
    cpu_millis: int
    tolerates: frozenset[str]
    within: int
    """GPUs per group the gang must stay within: the node's width for the whole node, 1 for
    one GPU, 0 for one device."""

    @property
    def gang(self) -> Gang:
        """What placement needs to know of the item."""
        return (self.size, self.within, self.tolerates)


@dataclass(frozen=True)
class HostLimits:
    """What a node's host can give to guaranteed devices: bytes and millicores."""

    memory: int
    cpu_millis: int


Pattern = tuple[tuple[Item, int], ...]
Layout = tuple[tuple[str, Gpus], ...]
"""Per device kind: each GPU's taints and how many devices of the kind it holds."""


def node_layout(group: NodeGroup, config: NodeConfig) -> Layout:
    """Where a node of `group` in `config` holds its devices, kind by kind."""
    per_gpu = [option_devices(option) for option in config.options]
    return tuple(
        (
            device,
            tuple(
                (taints, held.get(device, 0))
                for taints, held in zip(group.device_taints, per_gpu, strict=True)
            ),
        )
        for device in config.devices
    )


def patterns(
    group: NodeGroup, config: NodeConfig, host: HostLimits, items: list[Item]
) -> list[Pattern]:
    """Every maximal multiset of `items` that fits one node of `group` in `config`."""
    usable = tuple(sorted(i for i in set(items) if group.node_taints <= i.tolerates))
    layout = node_layout(group, config)
    return list(_patterns(layout, _reachable(host, layout, usable), usable))


def _reachable(host: HostLimits, layout: Layout, items: tuple[Item, ...]) -> HostLimits:
    """`host` with each limit lowered to the most any multiset of `items` on the layout's
    devices could use: the patterns are the same for every host at least that large, so
    clusters whose nodes differ only in memory or CPU that no pattern can reach share one
    enumeration."""
    memory = cpu = 0
    for device, gpus in layout:
        held = sum(n for _, n in gpus)
        memory += held * max((i.host_memory for i in items if i.device == device), default=0)
        cpu += held * max((i.cpu_millis for i in items if i.device == device), default=0)
    return HostLimits(min(host.memory, memory), min(host.cpu_millis, cpu))


@lru_cache(maxsize=8192)
def _patterns(layout: Layout, host: HostLimits, items: tuple[Item, ...]) -> tuple[Pattern, ...]:
    structure = dict(layout)
    capacity = {device: sum(n for _, n in gpus) for device, gpus in layout}
    items = tuple(
        i
        for i in items
        if capacity.get(i.device, 0) >= i.size
        and i.host_memory * i.size <= host.memory
        and i.cpu_millis * i.size <= host.cpu_millis
        and fits(structure[i.device], (i.gang,))
    )
    simple = {  # one taint class and no gang narrower than the node: capacity says it all
        device: len({t for t, n in gpus if n}) <= 1
        and all(i.within >= len(gpus) or i.size == 1 for i in items if i.device == device)
        for device, gpus in layout
    }
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
        if simple[item.device]:
            return True
        counts[index] += 1
        gangs = tuple(gang.gang for gang in _expand(items, counts) if gang.device == item.device)
        counts[index] -= 1
        return fits(structure[item.device], gangs)

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


def _gang_key(gang: Gang) -> tuple[int, int, list[str]]:
    return (gang[0], gang[1], sorted(gang[2]))


def _expand(items: tuple[Item, ...], counts: list[int]) -> list[Item]:
    """One entry per gang, in the canonical order placements are computed in."""
    return sorted(
        (item for item, n in zip(items, counts, strict=True) for _ in range(n)),
        key=lambda i: _gang_key(i.gang),
    )


def pattern_gangs(pattern: Pattern, device: str) -> list[Item]:
    """The pattern's gangs of one device kind, one entry per gang, in placement order."""
    items = tuple(item for item, _ in pattern if item.device == device)
    return _expand(items, [n for item, n in pattern if item.device == device])
