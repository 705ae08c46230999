"""Device kinds: identical devices of one pool, whole GPUs or one MIG profile, as the DRA
driver publishes them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compiler.catalog import GpuModel, MigProfile
from compiler.cel import quantity_value, semver_value
from compiler.ir.keys import WHOLE_GPU, DeviceKey

WHOLE = "whole"
"""The layout of a GPU that MIG does not partition."""
ALL_DISABLED = "all-disabled"
"""The mig-parted configuration of a node with MIG off on every GPU."""


@dataclass(frozen=True, order=True)
class DeviceKind:
    """Identical devices of one pool: whole GPUs of a model, or one MIG profile of it."""

    pool: str
    model_id: str
    profile_name: str  # "" for a whole GPU
    model: GpuModel
    profile: MigProfile | None

    @property
    def device(self) -> str:
        """`gpu` for a whole GPU, else the MIG profile's name: how a node's devices are counted."""
        return self.profile_name or WHOLE_GPU

    @property
    def key(self) -> DeviceKey:
        """The kind's key (written `h100/gpu` or `h100/mig-3g.40gb`)."""
        return DeviceKey(self.pool, self.device)

    @property
    def is_mig(self) -> bool:
        """Whether this is a MIG device rather than a whole GPU."""
        return self.profile is not None

    def cel_device(self, driver: str) -> dict[str, Any]:
        """The value of the CEL variable `device` for this kind, as the driver publishes it."""
        model, profile = self.model, self.profile
        attributes: dict[str, Any] = {
            "type": "mig" if profile else "gpu",
            "productName": model.product_name,
            "brand": "Nvidia",
            "architecture": model.architecture,
            "cudaComputeCapability": semver_value(model.cuda_compute_capability),
        }
        capacity: dict[str, Any] = {"memory": quantity_value(str(model.memory_bytes))}
        if profile is not None:
            attributes["profile"] = profile.name
            capacity["memory"] = quantity_value(str(profile.memory_mib * 2**20))
        return {
            "driver": driver,
            "allowMultipleAllocations": False,
            "attributes": {driver: attributes, "resource.kubernetes.io": {}},
            "capacity": {driver: capacity, "resource.kubernetes.io": {}},
        }
