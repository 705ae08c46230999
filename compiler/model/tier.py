"""GpuTier: a class of devices teams get quotas for; compiles to a DeviceClass."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from compiler.model.base import Name, PolicyObject, QualifiedName, Strict
from compiler.model.types import Quantity


class Selector(Strict):
    """Which devices to select: structured fields (all must hold) or a raw CEL expression."""

    models: Annotated[list[Annotated[str, Field(min_length=1)]], Field(max_length=64)] = []
    min_memory: Quantity | None = None
    architectures: Annotated[list[Annotated[str, Field(min_length=1)]], Field(max_length=16)] = []
    cel: Annotated[str, Field(min_length=1, max_length=10 * 1024)] | None = None

    @model_validator(mode="after")
    def _one_style(self) -> Selector:
        structured = bool(self.models or self.architectures or self.min_memory is not None)
        if self.cel is not None and structured:
            raise ValueError("use either `cel` or the structured fields, not both")
        return self


class GpuTierSpec(Strict):
    """How a tier selects, shares and configures its devices.

    `fallbacks` names tiers to try in order when this one has no free device (a claim with
    `firstAvailable`); `sharing` adds the NVIDIA driver's opaque GpuConfig; `extendedResourceName`
    lets pods keep asking for a legacy extended resource that DRA then serves from this class.
    """

    select: Selector = Selector()
    partition: Annotated[str, Field(pattern=r"^[1-7]g\.[0-9]+gb(\+me)?$")] | None = None
    host_memory_per_gpu: Quantity | None = None
    cpu_per_gpu: Quantity | None = None
    gang_match_attribute: QualifiedName | None = None
    fallbacks: Annotated[list[Name], Field(max_length=7)] = []
    sharing: Literal["Exclusive", "TimeSlicing", "MPS"] = "Exclusive"
    time_slice_interval: Literal["Default", "Short", "Medium", "Long"] | None = None
    extended_resource_name: QualifiedName | None = None


class GpuTier(PolicyObject):
    """A GPU tier (training, inference, ...)."""

    kind: Literal["GpuTier"]
    spec: GpuTierSpec
