"""GpuModel: a GPU model the built-in catalog lacks, described by the platform.

The built-in catalog (compiler/catalog/gpus.yaml) holds what the NVIDIA DRA driver publishes
for the models gpufleet knows. A fleet with another model describes it in a document of this
kind (the platform's, like clusters and tiers); a pool may then name it in `gpu`. The built-in
entries are read into the same `GpuModelSpec` and checked by the same rules
(compiler.catalog.entries), so a model written here is held to exactly what a built-in one is.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from compiler.model.base import PolicyObject, Strict
from compiler.model.types import MigProfileName

ModelName = Annotated[
    str, Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][-A-Za-z0-9._]*$")
]
"""An id, alias or family of a GPU model as a pool's `gpu` or a tier's `models` names it."""

Slices = Annotated[int, Field(ge=1, le=16)]


class MigProfileSpec(Strict):
    """One MIG GPU-instance profile: its name, NVML's GPU-instance profile id, the slices an
    instance takes, where it may start, and its memory as `nvidia-smi mig -lgip` lists it."""

    name: Annotated[MigProfileName, Field(examples=["3g.40gb"])]
    """The profile as the DRA driver publishes it (attribute `profile`) and mig-parted names it."""
    gi_profile_id: Annotated[int, Field(alias="giProfileId", ge=0, le=63, examples=[9])]
    """NVML's GPU-instance profile id (`nvidia-smi mig -lgip`, column ID)."""
    compute_slices: Annotated[Slices, Field(examples=[3])]
    """Compute slices one instance takes."""
    memory_slices: Annotated[Slices, Field(examples=[4])]
    """Memory slices one instance spans (consecutive, from its start)."""
    starts: Annotated[
        list[Annotated[int, Field(ge=0, le=15)]],
        Field(min_length=1, max_length=16, examples=[[0, 4]]),
    ]
    """The memory-slice indices an instance may start at (`nvidia-smi mig -lgipp`); no two
    overlap, and each instance must end within the GPU's memory slices."""
    media: Annotated[bool, Field(examples=[True])] = False
    """Whether the profile holds the GPU's media extensions (`+me`): at most one such
    instance per GPU."""
    memory_mib: Annotated[int, Field(alias="memoryMiB", ge=1, le=16 * 2**20, examples=[40448])]
    """The instance's memory in MiB, published as capacity `memory` (in bytes)."""


class MigSpec(Strict):
    """A MIG-capable model's slices and profiles: instances on one GPU do not share a memory
    slice, and their compute slices add up to at most the GPU's."""

    memory_slices: Annotated[Slices, Field(examples=[8])]
    """The GPU's memory slices."""
    compute_slices: Annotated[Slices, Field(examples=[7])]
    """The GPU's compute slices."""
    profiles: Annotated[
        list[MigProfileSpec],
        Field(
            min_length=1,
            max_length=32,
            examples=[
                [
                    {
                        "name": "1g.24gb",
                        "giProfileId": 14,
                        "computeSlices": 1,
                        "memorySlices": 1,
                        "starts": [0, 1, 2, 3],
                        "memoryMiB": 24064,
                    }
                ]
            ],
        ),
    ]
    """Every GPU-instance profile the model offers."""


class BoardSpec(Strict):
    """How the GPUs of one kind of node group: GPUs per NUMA node and per PCIe root, groups
    being consecutive GPU indices (as `nvidia-smi topo -m` shows them)."""

    name: Annotated[
        str,
        Field(
            min_length=1, max_length=100, pattern=r"^[a-z0-9][-a-z0-9]*$", examples=["hgx-h100-8"]
        ),
    ]
    """The board's name, shown where a figure of it is used."""
    gpus: Annotated[Slices, Field(examples=[8])]
    """GPUs per node on this board: a pool with as many `gpusPerNode` uses it."""
    numa_node: Annotated[Slices | None, Field(examples=[4])] = None
    """GPUs per NUMA node (None: not known)."""
    pcie_root: Annotated[Slices | None, Field(examples=[2])] = None
    """GPUs per PCIe root (None: not known)."""
    source: Annotated[
        str, Field(max_length=1000, examples=["nvidia-smi topo -m on one of our nodes"])
    ] = ""
    """Where the figures come from."""
    unverified: Annotated[
        list[Literal["numaNode", "pcieRoot"]], Field(examples=[["pcieRoot"]])
    ] = []
    """Figures no published topology dump confirms."""


class GpuModelSpec(Strict):
    """What the NVIDIA DRA driver publishes for one GPU model, and its MIG geometry and boards."""

    family: Annotated[ModelName | None, Field(examples=["RTX-PRO-6000"])] = None
    """The family a tier's `models` may name to select it with its kin (default: the model's
    name). It may be a built-in family (e.g. `H100` for an H100 PCIe)."""
    aliases: Annotated[
        list[ModelName], Field(max_length=16, examples=[["rtx-pro-6000-server"]])
    ] = []
    """Further names a pool's `gpu` may use."""
    product_name: Annotated[
        str,
        Field(
            min_length=1,
            max_length=200,
            pattern=r"^[ -~]+$",
            examples=["NVIDIA RTX PRO 6000 Blackwell Server Edition"],
        ),
    ]
    """NVML's name, which the driver publishes as attribute `productName`."""
    architecture: Annotated[
        str,
        Field(
            min_length=1,
            max_length=64,
            pattern=r"^[A-Za-z0-9][-A-Za-z0-9 ]*$",
            examples=["Blackwell"],
        ),
    ]
    """The attribute `architecture` (Ampere, Hopper, Blackwell, ...)."""
    cuda_compute_capability: Annotated[
        str, Field(pattern=r"^[0-9]{1,3}\.[0-9]{1,3}$", examples=["12.0"])
    ]
    """The attribute `cudaComputeCapability`, as major.minor (a version)."""
    memory_mib: Annotated[int, Field(alias="memoryMiB", ge=1, le=16 * 2**20, examples=[97887])]
    """NVML's memory.total in MiB, published as capacity `memory` (in bytes)."""
    pci_device_id: Annotated[
        str, Field(alias="pciDeviceId", pattern=r"^0x[0-9A-F]{4}$", examples=["0x2BB5"])
    ]
    """The PCI device id, which mig-parted's `device-filter` names (upper-case hex)."""
    mig: Annotated[
        MigSpec | None,
        Field(
            examples=[
                {
                    "memorySlices": 4,
                    "computeSlices": 4,
                    "profiles": [
                        {
                            "name": "4g.96gb",
                            "giProfileId": 0,
                            "computeSlices": 4,
                            "memorySlices": 4,
                            "starts": [0],
                            "memoryMiB": 97280,
                        }
                    ],
                }
            ]
        ),
    ] = None
    """The MIG geometry (None: the model has no MIG)."""
    boards: Annotated[
        list[BoardSpec],
        Field(
            max_length=8, examples=[[{"name": "rtx-8", "gpus": 8, "numaNode": 4, "pcieRoot": 2}]]
        ),
    ] = []
    """The boards the model ships on, at most one per GPU count."""


class GpuModel(PolicyObject):
    """A GPU model for the fleet's catalog: `metadata.name` is its id."""

    kind: Literal["GpuModel"]
    spec: Annotated[
        GpuModelSpec,
        Field(
            examples=[
                {
                    "productName": "NVIDIA RTX PRO 6000 Blackwell Server Edition",
                    "architecture": "Blackwell",
                    "cudaComputeCapability": "12.0",
                    "memoryMiB": 97887,
                    "pciDeviceId": "0x2BB5",
                }
            ]
        ),
    ]
    """What the driver publishes for the model, its MIG geometry and boards."""
