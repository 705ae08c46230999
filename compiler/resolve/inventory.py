"""Expand a cluster's node pools into device kinds: what the DRA driver would publish."""

from __future__ import annotations

from compiler.catalog import GpuModel
from compiler.ir import DeviceKind


def pool_device_kinds(pool: str, model: GpuModel, mig_allowed: bool) -> list[DeviceKind]:
    """The whole-GPU kind of a pool, plus one kind per MIG profile when MIG is allowed."""
    kinds = [DeviceKind(pool, model.id, "", model, None)]
    if mig_allowed and model.mig is not None:
        kinds.extend(DeviceKind(pool, model.id, p.name, model, p) for p in model.mig.profiles)
    return kinds
