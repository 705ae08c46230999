"""Which device attributes each release of the NVIDIA DRA driver publishes, and what they group.

A gang's `matchAttribute` keeps its devices on one value of an attribute; the scheduler never
allocates a claim whose devices lack it. So a tier may match gangs only on an attribute the
cluster's driver publishes, and a gang must fit in the devices that share one value: one node
(`productName`...), one NUMA node, one PCIe root, one GPU (its MIG devices share the parent's
bus id) or one device (`uuid`).

Releases moved from calendar to SemVer names (25.3 -> 0.1, 25.8 -> 0.2, 25.12 -> 0.3, then
v0.4.x); a cluster declares the release its driver runs as the chart version, e.g. `25.8` for
v25.8.1, `0.4` for v0.4.1, `0.5` for main. Source for every row: kubernetes-sigs/
dra-driver-nvidia-gpu (formerly NVIDIA/k8s-dra-driver-gpu), `cmd/gpu-kubelet-plugin/
deviceinfo.go` and `mig.go` per tag, as summarised in ../shared/reference/nvidia-gpus.md
("NVIDIA DRA driver"). Rows marked unverified rest on forks of the release, not its tag.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Final, Literal, get_args

NVIDIA_DRIVER = "gpu.nvidia.com"
"""The NVIDIA DRA driver's name: the driver a cluster runs unless it names another, and the
only one whose attributes this table describes."""
DRIVER_CLASSES = {NVIDIA_DRIVER: ("gpu.nvidia.com", "mig.nvidia.com", "vfio.gpu.nvidia.com")}
"""driver -> the DeviceClasses its chart installs."""
DriverVersion = Literal["25.3", "25.8", "25.12", "0.4", "0.5"]
"""Releases of the NVIDIA DRA driver, oldest first (0.5: main, unreleased)."""
DRIVER_VERSIONS: tuple[DriverVersion, ...] = get_args(DriverVersion)
CURRENT_DRIVER: Final = "0.4"
"""The latest release (v0.4.1): what a cluster that declares no driverVersion runs."""
STANDARD_DOMAIN = "resource.kubernetes.io"

TYPE_ATTRIBUTE = "type"
"""The attribute whose value says what a device is (`DEVICE_TYPES`); every class selects on it."""
GPU_DEVICE, MIG_DEVICE, VFIO_DEVICE = "gpu", "mig", "vfio"
DEVICE_TYPES = (GPU_DEVICE, MIG_DEVICE, VFIO_DEVICE)
"""Values of `type` on the driver's GPU devices: a whole GPU, a MIG device, a GPU passed
through to a VM (`DRIVER_CLASSES` selects each with one class)."""
IDENTITY_ATTRIBUTES = ("productName", "architecture", "cudaComputeCapability")
"""The attributes that say which GPU model a device is (NVML's name, architecture and compute
capability; MIG devices carry their parent's), published by every release."""
MEMORY_CAPACITY = "memory"
"""The capacity holding a device's memory in bytes (a whole GPU: NVML's memory.total)."""
MEMORY_SLICE_CAPACITY = "memorySlice"
"""A MIG device's capacity `memorySlice<i>` (value 1) for every memory slice it spans."""
PARENT_ATTRIBUTE, PROFILE_ATTRIBUTE = "parentUUID", "profile"
"""A MIG device's parent GPU (its uuid) and MIG profile name (e.g. 3g.40gb)."""
HEALTH_TAINTS = {
    "xid": "an XID error (value: the XID; NoSchedule, or None for XIDs the monitor treats as "
    "non-fatal)",
    "gpu-lost": "the GPU fell off the bus (NoSchedule)",
    "unmonitored": "the GPU's health cannot be monitored (None)",
}
"""Unqualified key -> meaning of the device taints the driver's health check puts on a GPU
(driver gate NVMLDeviceHealthCheck, since 0.4; `device_health.go`)."""
HEALTH_TAINTS_SINCE: Final = "0.4"

ValueType = Literal["string", "int", "bool", "version"]
"""The DeviceAttribute field a value is published in: stringValue, intValue, boolValue or
versionValue (a semantic version: compared with semver(...), never with a string)."""


class Scope(enum.Enum):
    """Which devices share one value of an attribute."""

    NODE = "node"
    NUMA_NODE = "numaNode"
    PCIE_ROOT = "pcieRoot"
    GPU = "gpu"
    DEVICE = "device"


@dataclass(frozen=True)
class DriverAttribute:
    """One attribute: its name (unqualified: in the driver's own domain), what shares a value,
    the device types it is on, the releases that publish it and the type of its value."""

    name: str
    scope: Scope
    types: frozenset[str]
    since: str
    until: str | None = None
    """The last release publishing it; None: still published."""
    note: str = ""
    value: ValueType | None = dataclasses.field(kw_only=True)
    """The type of its value (`deviceinfo.go`, `mig.go`); None where it depends on how the
    driver runs (numaNode is a list of ints under the driver gate DRAListTypeAttributes)."""

    def published_by(self, version: str) -> bool:
        """Whether release `version` publishes the attribute."""
        index = DRIVER_VERSIONS.index(version)
        last = len(DRIVER_VERSIONS) - 1 if self.until is None else DRIVER_VERSIONS.index(self.until)
        return DRIVER_VERSIONS.index(self.since) <= index <= last

    def qualified(self, driver: str) -> str:
        """The name as a claim's matchAttribute spells it."""
        return self.name if "/" in self.name else f"{driver}/{self.name}"

    @property
    def releases(self) -> str:
        """The releases that publish it: `drivers 25.3 to 25.8`, `driver 0.5 and later`."""
        if self.until is None:
            if self.since == DRIVER_VERSIONS[0]:
                return "every driver release"
            return f"driver {self.since} and later"
        if self.since == self.until:
            return f"driver {self.since} only"
        return f"drivers {self.since} to {self.until}"


BOTH = frozenset({"gpu", "mig"})
GPU = frozenset({"gpu"})
MIG = frozenset({"mig"})
FIRST = DRIVER_VERSIONS[0]

ATTRIBUTES: tuple[DriverAttribute, ...] = (
    DriverAttribute("type", Scope.NODE, BOTH, FIRST, value="string"),
    DriverAttribute("uuid", Scope.DEVICE, BOTH, FIRST, value="string"),
    DriverAttribute("productName", Scope.NODE, BOTH, FIRST, value="string"),
    DriverAttribute("brand", Scope.NODE, BOTH, FIRST, value="string"),
    DriverAttribute("architecture", Scope.NODE, BOTH, FIRST, value="string"),
    DriverAttribute("cudaComputeCapability", Scope.NODE, BOTH, FIRST, value="version"),
    DriverAttribute("driverVersion", Scope.NODE, BOTH, FIRST, value="version"),
    DriverAttribute("cudaDriverVersion", Scope.NODE, BOTH, FIRST, value="version"),
    DriverAttribute("profile", Scope.NODE, MIG, FIRST, value="string"),
    DriverAttribute("parentUUID", Scope.GPU, MIG, FIRST, value="string"),
    DriverAttribute("index", Scope.GPU, GPU, FIRST, "25.3", "gone from 25.8", value="int"),
    DriverAttribute("minor", Scope.GPU, GPU, FIRST, "25.3", "gone from 25.8", value="int"),
    DriverAttribute(
        "pcieBusID",
        Scope.GPU,
        BOTH,
        FIRST,
        "25.8",
        "renamed resource.kubernetes.io/pciBusID in 25.12; on 25.3 unverified",
        value="string",
    ),
    DriverAttribute(f"{STANDARD_DOMAIN}/pciBusID", Scope.GPU, BOTH, "25.12", value="string"),
    DriverAttribute(
        f"{STANDARD_DOMAIN}/pcieRoot",
        Scope.PCIE_ROOT,
        BOTH,
        FIRST,
        note="on 25.3 unverified",
        value="string",
    ),
    DriverAttribute(
        f"{STANDARD_DOMAIN}/numaNode",
        Scope.NUMA_NODE,
        BOTH,
        "0.5",
        note='main after v0.4.1, "Align NUMA attribute with KEP-6072"',
        value=None,
    ),
)


@cache
def published(driver: str, version: str, device_type: str) -> Mapping[str, DriverAttribute]:
    """Qualified name -> attribute, for what release `version` of the NVIDIA driver (named
    `driver`) publishes on devices of `device_type` (`gpu` or `mig`)."""
    return {
        a.qualified(driver): a
        for a in ATTRIBUTES
        if device_type in a.types and a.published_by(version)
    }


def releases_publishing(driver: str, device_type: str, names: frozenset[str]) -> tuple[str, ...]:
    """The releases whose attributes for `device_type` devices are consistent with a device
    that publishes the qualified attribute `names`: every name it shows is one the release
    publishes, and no attribute the table knows the release to publish without caveat
    (an unverified or gate-dependent one may be missing) is missing. Oldest first."""
    known = {a.qualified(driver) for a in ATTRIBUTES}
    shown = names & known
    found = []
    for version in DRIVER_VERSIONS:
        offered = published(driver, version, device_type)
        certain = {
            n for n, a in offered.items() if "unverified" not in a.note and a.value is not None
        }
        if shown <= set(offered) and certain <= shown | _OPTIONAL:
            found.append(version)
    return tuple(found)


_OPTIONAL = frozenset({f"{NVIDIA_DRIVER}/brand", f"{NVIDIA_DRIVER}/cudaDriverVersion"})
"""Attributes a release publishes only where NVML answers (left out of consistency)."""


def gpu_device_name(minor: int) -> str:
    """The name the NVIDIA driver publishes GPU `minor` of a node under (`gpu-5`; a policy's
    `device: 5` is that GPU)."""
    return f"gpu-{minor}"


def mig_device_name(minor: int, profile: str, gi_profile_id: int, start: int) -> str:
    """The name the NVIDIA driver publishes a MIG device under (e.g. gpu-3-mig-3g40gb-9-4)."""
    cleaned = _NOT_DNS.sub("-", profile.replace(".", "").lower()).strip("-")
    return f"{gpu_device_name(minor)}-mig-{cleaned}-{gi_profile_id}-{start}"


def device_minor(name: str) -> int | None:
    """The GPU a device name belongs to (`gpu-5`, or a MIG device of it), or None."""
    found = _DEVICE_MINOR.match(name)
    return int(found.group(1)) if found else None


_NOT_DNS = re.compile(r"[^a-z0-9-]")
_DEVICE_MINOR = re.compile(r"^gpu-([0-9]+)(?:-|$)")


def health_taint(driver: str, key: str) -> str | None:
    """What the driver's health taint `key` (qualified) means, or None if it is none of them."""
    domain, _, name = key.partition("/")
    return HEALTH_TAINTS.get(name) if domain == driver else None


def qualified(driver: str, name: str) -> str:
    """An attribute or capacity name as the scheduler reads it: unqualified names are in the
    driver's own domain."""
    return name if "/" in name else f"{driver}/{name}"


def attribute(driver: str, name: str) -> DriverAttribute | None:
    """The attribute called `name` (qualified) in any release, if the driver ever had it."""
    return next((a for a in ATTRIBUTES if a.qualified(driver) == name), None)


def attribute_types(driver: str) -> Mapping[str, ValueType]:
    """Qualified name -> value type, for every attribute the driver (named `driver`) has
    published in any release whose type does not depend on how it runs: what a selector's
    `device.attributes[<domain>].<name>` is type-checked as."""
    return {a.qualified(driver): a.value for a in ATTRIBUTES if a.value is not None}
