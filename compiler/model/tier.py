"""GpuTier: a class of devices teams get quotas for; compiles to a DeviceClass."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from compiler.model.base import Name, PolicyObject, QualifiedName, Strict
from compiler.model.types import MigProfileName, Quantity


class Selector(Strict):
    """Which devices to select: structured fields (all must hold) or a raw CEL expression."""

    models: Annotated[
        list[Annotated[str, Field(min_length=1)]],
        Field(max_length=64, examples=[["H100", "H200", "B200"], ["H100-80GB", "A100-80GB"]]),
    ] = []
    """GPU models to select: catalog ids (`H100-80GB`, `A100-40GB`, `L40S`, ...) or families
    (`H100`, `A100`, ...), any of which matches. Default: any model."""
    min_memory: Annotated[Quantity | None, Field(examples=["79Gi", "140Gi"])] = None
    """The least memory a device must have, in bytes, as the driver reports it: an "80GB" H100
    reports 79.65 GiB, so `80Gi` selects none of them and `79Gi` all. Default: any."""
    architectures: Annotated[
        list[Annotated[str, Field(min_length=1)]],
        Field(max_length=16, examples=[["Hopper", "Blackwell"], ["Ada Lovelace"]]),
    ] = []
    """GPU architectures to select, as the driver publishes them (`Ampere`, `Hopper`,
    `Blackwell`, `Ada Lovelace`). Default: any."""
    cel: Annotated[
        Annotated[str, Field(min_length=1, max_length=10 * 1024)] | None,
        Field(examples=['device.attributes["gpu.nvidia.com"].architecture == "Ada Lovelace"']),
    ] = None
    """A raw DRA CEL expression over `device.driver`, `device.attributes` and
    `device.capacity`, instead of the structured fields; type-checked at compile time and
    written into the DeviceClass as is."""

    @model_validator(mode="after")
    def _one_style(self) -> Selector:
        structured = bool(self.models or self.architectures or self.min_memory is not None)
        if self.cel is not None and structured:
            raise ValueError("use either `cel` or the structured fields, not both")
        return self


class GpuTierSpec(Strict):
    """How a tier selects, shares and configures its devices."""

    select: Annotated[
        Selector, Field(examples=[{"models": ["H100", "H200", "B200"], "minMemory": "79Gi"}])
    ] = Selector()
    """Which devices the tier's DeviceClass selects: structured fields (all must hold) or a
    raw CEL expression. Default: every GPU of the driver."""
    partition: Annotated[MigProfileName | None, Field(examples=["3g.40gb", "1g.10gb"])] = None
    """A MIG profile: the tier's devices are MIG partitions of this profile on selected GPUs
    in `mig: allowed` or `mixed` pools, instead of whole GPUs. Default: whole GPUs."""
    host_memory_per_gpu: Annotated[Quantity | None, Field(examples=["200Gi"])] = None
    """Host memory in bytes that comes with each device: the solver fits it on the node beside
    the device, and it goes into the team namespace's `gpufleet-host` quota. Default: the
    node's allocatable memory divided by its GPUs."""
    cpu_per_gpu: Annotated[Quantity | None, Field(examples=[24, "12"])] = None
    """CPU cores that come with each device: the solver fits them on the node beside the
    device, and they go into the team namespace's `gpufleet-host` quota. Default: the node's
    allocatable CPU divided by its GPUs."""
    gang_match_attribute: Annotated[
        QualifiedName | None,
        Field(examples=["resource.kubernetes.io/pcieRoot", "gpu.nvidia.com/productName"]),
    ] = None
    """A device attribute every device of a gang shares (the gang claim's `matchAttribute`):
    `resource.kubernetes.io/numaNode` or `.../pcieRoot` keep a gang within a NUMA node or
    PCIe root, which the solver respects. Default: none (a gang is on one node)."""
    fallbacks: Annotated[list[Name], Field(max_length=7, examples=[["training"]])] = []
    """Tiers a claim may take, in order, when this one has no free device: the claim
    templates' `firstAvailable` alternatives, where the namespace holds quota for them."""
    sharing: Annotated[
        Literal["Exclusive", "TimeSlicing", "MPS"], Field(examples=["TimeSlicing"])
    ] = "Exclusive"
    """How the NVIDIA driver shares a device among the processes using it: the claims carry its
    opaque `GpuConfig` (`MigDeviceConfig` for MIG tiers). Which pods share a device is decided
    by the claim: a team's `sharedClaims`. TimeSlicing needs the driver's `TimeSlicingSettings`
    gate, MPS its `MPSSupport` gate (the cluster's `driverFeatureGates`)."""
    time_slice_interval: Annotated[
        Literal["Default", "Short", "Medium", "Long"] | None, Field(examples=["Long"])
    ] = None
    """With `sharing: TimeSlicing` on whole GPUs: how long each process runs before the next.
    Default: the driver's."""
    extended_resource_name: Annotated[
        QualifiedName | None, Field(examples=["example.com/training"])
    ] = None
    """An extended resource pods may keep asking for (`resources.limits`) that DRA serves from
    this tier's DeviceClass (Kubernetes 1.34 on); it also gets quota keys. Use a name in your
    own domain: one the driver's own classes map (`nvidia.com/gpu`) is GF230."""


class GpuTier(PolicyObject):
    """A GPU tier (training, inference, ...)."""

    kind: Literal["GpuTier"]
    spec: Annotated[
        GpuTierSpec,
        Field(
            examples=[
                {
                    "select": {"models": ["H100", "H200", "B200"], "minMemory": "79Gi"},
                    "hostMemoryPerGpu": "200Gi",
                    "cpuPerGpu": 24,
                }
            ]
        ),
    ]
    """How the tier selects, shares and configures its devices; compiles to a DeviceClass in
    every cluster where it selects devices (and a Kueue ResourceFlavor)."""
