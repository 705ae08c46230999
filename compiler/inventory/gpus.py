"""The GPUs of one node, as its driver publishes them: one `NodeGpu` per physical GPU, put
together from its devices (a whole GPU, its static MIG devices, or its partitionable devices
under Dynamic MIG), and the facts that say which model it is.

A GPU whose MIG mode is on publishes no whole-GPU device, only its MIG devices, which carry
their parent's uuid and attributes; a GPU under Dynamic MIG publishes its whole device and a
device per profile and placement, all consuming the GPU's counter set. Either way the GPU is
known by its uuid (a MIG device's `parentUUID`).
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.catalog.driver import (
    GPU_DEVICE,
    MEMORY_CAPACITY,
    MIG_DEVICE,
    PARENT_ATTRIBUTE,
    PROFILE_ATTRIBUTE,
    STANDARD_DOMAIN,
    TYPE_ATTRIBUTE,
    device_minor,
    gpu_device_name,
    qualified,
)
from compiler.diagnostics import Span
from compiler.inventory.dump import ClusterDump, Device, Node, ResourceSlice, Taint


@dataclass(frozen=True)
class GpuIdentity:
    """What says which model a GPU is: the driver's productName, architecture and
    cudaComputeCapability (major.minor), and its memory in MiB (None when the dump does not
    show it: a GPU in MIG mode publishes only its instances' memory)."""

    product_name: str | None
    architecture: str | None
    compute_capability: str | None
    memory_mib: int | None


@dataclass(frozen=True)
class NodeGpu:
    """One physical GPU of a node: its uuid, the driver's device name for it (`gpu-<minor>`),
    its identity, the MIG profiles of its static MIG devices (sorted; empty when whole),
    whether it is partitionable (Dynamic MIG), and the taints on any of its devices."""

    uuid: str
    name: str
    identity: GpuIdentity
    mig_profiles: tuple[str, ...]
    partitionable: bool
    pcie_root: str | None
    """`resource.kubernetes.io/pcieRoot`, when published."""
    numa_node: int | None
    """`resource.kubernetes.io/numaNode` (an int, or a one-element list of one), when
    published (driver 0.5)."""
    taints: tuple[tuple[str, Taint, Span], ...]
    """(device name, taint, where the taint is written) for every taint on one of the GPU's
    devices."""


def node_gpus(dump: ClusterDump, node: Node, driver: str) -> tuple[NodeGpu, ...]:
    """The GPUs `driver` publishes for `node`, in the order of their device names."""
    members: dict[str, list[tuple[ResourceSlice, Device]]] = {}
    for slice_ in dump.slices_of(node.name, driver):
        for device in slice_.devices:
            kind = device.attribute(qualified(driver, TYPE_ATTRIBUTE))
            if kind == GPU_DEVICE:
                key = device.attribute(qualified(driver, "uuid"))
            elif kind == MIG_DEVICE:
                key = device.attribute(qualified(driver, PARENT_ATTRIBUTE))
            else:
                continue  # vfio passthrough and other devices are not counted as GPUs
            members.setdefault(str(key or f"{slice_.pool}/{device.name}"), []).append(
                (slice_, device)
            )
    gpus = [_gpu(dump, driver, uuid, devices) for uuid, devices in members.items()]
    return tuple(sorted(gpus, key=lambda g: (_minor(g.name), g.name)))


def _minor(name: str) -> int:
    minor = device_minor(name)
    return 1 << 30 if minor is None else minor


def _gpu(
    dump: ClusterDump, driver: str, uuid: str, devices: list[tuple[ResourceSlice, Device]]
) -> NodeGpu:
    whole = next(
        (d for _, d in devices if d.attribute(qualified(driver, TYPE_ATTRIBUTE)) == GPU_DEVICE),
        None,
    )
    shown = whole or devices[0][1]
    minor = device_minor(shown.name)
    name = shown.name if minor is None else gpu_device_name(minor)
    memory = whole.capacity.get(qualified(driver, MEMORY_CAPACITY)) if whole else None
    migs = [d for _, d in devices if d.attribute(qualified(driver, TYPE_ATTRIBUTE)) == MIG_DEVICE]
    partitionable = any(d.consumes_counters for _, d in devices)
    return NodeGpu(
        uuid=uuid,
        name=name,
        identity=GpuIdentity(
            product_name=_text(shown.attribute(qualified(driver, "productName"))),
            architecture=_text(shown.attribute(qualified(driver, "architecture"))),
            compute_capability=_major_minor(
                shown.attribute(qualified(driver, "cudaComputeCapability"))
            ),
            memory_mib=None if memory is None else int(memory) // 2**20,
        ),
        mig_profiles=()
        if partitionable
        else tuple(sorted(str(d.attribute(qualified(driver, PROFILE_ATTRIBUTE))) for d in migs)),
        partitionable=partitionable,
        pcie_root=_text(shown.attribute(f"{STANDARD_DOMAIN}/pcieRoot")),
        numa_node=_numa(shown.attribute(f"{STANDARD_DOMAIN}/numaNode")),
        taints=tuple(
            (device.name, taint, span)
            for slice_, device in devices
            for taint, span in dump.device_taint_sources(slice_, device)
        ),
    )


def _numa(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _major_minor(value: object) -> str | None:
    """`9.0.0` (a version attribute) or `9.0` as the catalog writes it: `9.0`."""
    if not isinstance(value, str):
        return None
    parts = value.split(".")
    return ".".join([*parts, "0"][:2]) if parts[0].isdigit() else None
