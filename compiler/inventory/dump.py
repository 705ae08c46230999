"""The typed contract of a cluster dump: what `kubectl get nodes,resourceslices,
devicetaintrules -o yaml` says about a fleet's GPUs, independent of the API version it printed.

Everything here is frozen and holds plain values, so `gpufleet inventory import` and
`gpufleet drift` read the same facts the same way:

- names are as the cluster spells them (node names, device names, DRA pool names);
- attribute and capacity names are always qualified: an unqualified name in a ResourceSlice is
  in the slice's driver's domain (`productName` of driver gpu.nvidia.com is
  `gpu.nvidia.com/productName`), as the scheduler reads it;
- attribute values are str, int or bool; a `version` attribute is a `Version` (its text), so it
  is never mistaken for a string attribute;
- quantities (capacity, counters, a node's cpu and memory) are exact `Fraction`s in base units
  (bytes, cores);
- the v1beta1 shape (a device's `basic:` wrapper) and the v1beta2/v1 shape read into the same
  `Device`; `api_version` keeps what the dump printed;
- every object keeps the `Span` where it starts in the dump, for located diagnostics.

Only devices of DRA drivers are recorded as the dump has them; which of them are GPUs, and of
which catalog model, is for the readers of this model to decide (compiler.inventory.matching).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction

from compiler.diagnostics import Span


class Version(str):
    """A `version` attribute's value (a semantic version such as "9.0.0"), kept as text."""

    __slots__ = ()


AttributeValue = str | int | bool
"""A device attribute's value: a str (or a `Version`), an int or a bool."""


@dataclass(frozen=True)
class Taint:
    """A node's taint (`spec.taints[]`) or a device's (`devices[].taints[]`, or the one a
    DeviceTaintRule puts on the devices it selects): key, value and effect as written
    (a device taint's effect is None, NoSchedule or NoExecute)."""

    key: str
    value: str
    effect: str

    def __str__(self) -> str:
        value = f"={self.value}" if self.value else ""
        return f"{self.key}{value}:{self.effect}"


@dataclass(frozen=True)
class CounterSet:
    """A ResourceSlice's shared counter set (`spec.sharedCounters[]`), e.g. one per GPU
    with the NVIDIA driver's Dynamic MIG: counter name -> value."""

    name: str
    counters: Mapping[str, Fraction]


@dataclass(frozen=True)
class CounterConsumption:
    """What a partitionable device takes from one counter set (`consumesCounters[]`)."""

    counter_set: str
    counters: Mapping[str, Fraction]


@dataclass(frozen=True)
class Device:
    """One device of a ResourceSlice, in the same shape whatever the API version.

    `attributes` and `capacity` are keyed by qualified name (see the module docstring).
    """

    name: str
    attributes: Mapping[str, AttributeValue]
    capacity: Mapping[str, Fraction]
    consumes_counters: tuple[CounterConsumption, ...] = ()
    taints: tuple[Taint, ...] = ()
    span: Span = field(default=Span(""), compare=False)

    def attribute(self, name: str) -> AttributeValue | None:
        """The attribute called `name` (qualified), or None when the device lacks it."""
        return self.attributes.get(name)


@dataclass(frozen=True)
class ResourceSlice:
    """One ResourceSlice: a driver's devices in one DRA pool (for a node-local driver the
    pool is named after the node, and `node_name` says which node publishes it)."""

    name: str
    api_version: str
    driver: str
    pool: str
    pool_generation: int
    pool_slice_count: int
    node_name: str | None
    devices: tuple[Device, ...]
    shared_counters: tuple[CounterSet, ...] = ()
    span: Span = field(default=Span(""), compare=False)


@dataclass(frozen=True)
class Node:
    """One Node: its name, labels, `status.capacity` and `status.allocatable` (resource name
    -> exact quantity), whether its Ready condition is True, and `spec.taints`."""

    name: str
    labels: Mapping[str, str]
    capacity: Mapping[str, Fraction]
    allocatable: Mapping[str, Fraction]
    ready: bool
    taints: tuple[Taint, ...] = ()
    kubelet_version: str | None = None
    """`status.nodeInfo.kubeletVersion` (e.g. v1.34.2), when the dump has it."""
    span: Span = field(default=Span(""), compare=False)


@dataclass(frozen=True)
class DeviceTaintRule:
    """A DeviceTaintRule: the taint it puts on every device its selector matches (a selector
    field left out matches every value; the v1alpha3 `deviceClassName` and `selectors`, gone
    from 1.35 on, are kept as found but not evaluated: `unevaluated` says so)."""

    name: str
    api_version: str
    driver: str | None
    pool: str | None
    device: str | None
    taint: Taint
    unevaluated: bool = False
    span: Span = field(default=Span(""), compare=False)

    def selects(self, driver: str, pool: str, device: str) -> bool:
        """Whether the rule's selector matches the device `device` of `driver`'s pool `pool`."""
        return (
            self.driver in (None, driver)
            and self.pool in (None, pool)
            and self.device in (None, device)
        )


@dataclass(frozen=True)
class ClusterDump:
    """Everything a dump says about a cluster's GPUs, each kind sorted by name (slices by
    driver, pool and name) so that readers see the same order whatever the dump's."""

    file: str
    nodes: tuple[Node, ...]
    slices: tuple[ResourceSlice, ...]
    taint_rules: tuple[DeviceTaintRule, ...]

    def node(self, name: str) -> Node | None:
        """The node called `name`, if the dump has it."""
        return next((n for n in self.nodes if n.name == name), None)

    def slices_of(self, node_name: str, driver: str) -> tuple[ResourceSlice, ...]:
        """The slices `driver` publishes for node `node_name`, of each pool's newest
        generation only (the scheduler ignores older ones while a driver republishes)."""
        mine = [s for s in self.slices if s.node_name == node_name and s.driver == driver]
        newest: dict[str, int] = {}
        for found in mine:
            newest[found.pool] = max(newest.get(found.pool, 0), found.pool_generation)
        return tuple(s for s in mine if s.pool_generation == newest[s.pool])

    def device_taints(self, slice_: ResourceSlice, device: Device) -> tuple[Taint, ...]:
        """The device's own taints and those the DeviceTaintRules put on it."""
        return tuple(taint for taint, _ in self.device_taint_sources(slice_, device))

    def device_taint_sources(
        self, slice_: ResourceSlice, device: Device
    ) -> tuple[tuple[Taint, Span], ...]:
        """`device_taints`, each with where it is written: the device, or the rule."""
        own = tuple((taint, device.span) for taint in device.taints)
        ruled = tuple(
            (rule.taint, rule.span)
            for rule in self.taint_rules
            if rule.selects(slice_.driver, slice_.pool, device.name)
        )
        return own + ruled
