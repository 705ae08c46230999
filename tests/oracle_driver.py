"""Which devices share one value of a gang's match attribute, per NVIDIA DRA driver release:
the oracle's own reading of README's "Gangs and GPU topology" table and the reference's "NVIDIA
DRA driver" section (/work/shared/reference/nvidia-gpus.md), not compiler/catalog/driver.py.

A gang whose tier names a match attribute must take devices that all carry one value of it;
the scheduler never allocates a device that lacks the attribute.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

RELEASES = ("25.3", "25.8", "25.12", "0.4", "0.5")
"""The driver's releases, oldest first, as a cluster's `driverVersion` names them."""
NVIDIA = "gpu.nvidia.com"


class Share(Enum):
    """The devices that share one value of an attribute."""

    NODE = "node"
    NUMA_NODE = "numaNode"
    PCIE_ROOT = "pcieRoot"
    GPU = "gpu"
    DEVICE = "device"


@dataclass(frozen=True)
class Published:
    """An attribute: what shares a value, on which device types, from and to which release."""

    share: Share
    types: frozenset[str]
    first: str = RELEASES[0]
    last: str = RELEASES[-1]

    def on(self, release: str, device_type: str) -> bool:
        """Whether `release` publishes it on devices of `device_type` (`gpu` or `mig`)."""
        if device_type not in self.types or release not in RELEASES:
            return False
        return RELEASES.index(self.first) <= RELEASES.index(release) <= RELEASES.index(self.last)


BOTH = frozenset({"gpu", "mig"})
ATTRIBUTES: dict[str, Published] = {
    # The GPU's own attributes, also on its MIG devices (which carry "the parent's attributes").
    f"{NVIDIA}/type": Published(Share.NODE, BOTH),
    f"{NVIDIA}/productName": Published(Share.NODE, BOTH),
    f"{NVIDIA}/brand": Published(Share.NODE, BOTH),
    f"{NVIDIA}/architecture": Published(Share.NODE, BOTH),
    f"{NVIDIA}/cudaComputeCapability": Published(Share.NODE, BOTH),
    f"{NVIDIA}/driverVersion": Published(Share.NODE, BOTH),
    f"{NVIDIA}/cudaDriverVersion": Published(Share.NODE, BOTH),
    f"{NVIDIA}/uuid": Published(Share.DEVICE, BOTH),
    # MIG devices only.
    f"{NVIDIA}/profile": Published(Share.NODE, frozenset({"mig"})),
    f"{NVIDIA}/parentUUID": Published(Share.GPU, frozenset({"mig"})),
    # Bus ids: one GPU and its MIG devices. `pcieBusID` until 25.8, then the standard name.
    f"{NVIDIA}/pcieBusID": Published(Share.GPU, BOTH, last="25.8"),
    "resource.kubernetes.io/pciBusID": Published(Share.GPU, BOTH, first="25.12"),
    # `index` and `minor` of full GPUs, gone from 25.8.0.
    f"{NVIDIA}/index": Published(Share.GPU, frozenset({"gpu"}), last="25.3"),
    f"{NVIDIA}/minor": Published(Share.GPU, frozenset({"gpu"}), last="25.3"),
    "resource.kubernetes.io/pcieRoot": Published(Share.PCIE_ROOT, BOTH),
    "resource.kubernetes.io/numaNode": Published(Share.NUMA_NODE, BOTH, first="0.5"),
}


def sharing(driver: str, release: str, name: str, device_type: str) -> Share | None:
    """What shares a value of attribute `name` on a device of `device_type`; None when the
    cluster's driver does not publish it there (or is not NVIDIA's: unknown)."""
    if driver != NVIDIA:
        return None
    found = ATTRIBUTES.get(name)
    return found.share if found is not None and found.on(release, device_type) else None
