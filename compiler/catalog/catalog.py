"""The GPU catalog's typed, immutable records: models, their MIG geometry and boards."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache


@dataclass(frozen=True)
class MigProfile:
    """A GPU-instance profile of one model, e.g. 3g.40gb on H100-80GB."""

    name: str
    gi_profile_id: int
    compute_slices: int
    memory_slices: int
    starts: tuple[int, ...]
    media: bool
    memory_mib: int


@dataclass(frozen=True)
class MigGeometry:
    """The slice counts of a MIG-capable model and the profiles it offers."""

    memory_slices: int
    compute_slices: int
    profiles: tuple[MigProfile, ...]

    def profile(self, name: str) -> MigProfile | None:
        """The profile called `name` (case-insensitive), if the model offers it."""
        wanted = name.lower()
        return next((p for p in self.profiles if p.name.lower() == wanted), None)


@dataclass(frozen=True)
class Board:
    """How the GPUs of one board group by NUMA node and by PCIe root (GPUs per group, groups
    of consecutive GPU indices), with where the figures come from."""

    id: str
    gpus: int
    numa_node: int | None
    pcie_root: int | None
    source: str
    unverified: tuple[str, ...] = ()


@dataclass(frozen=True)
class GpuModel:
    """One GPU model with what the NVIDIA DRA driver publishes for it."""

    id: str
    aliases: tuple[str, ...]
    family: str
    product_name: str
    architecture: str
    cuda_compute_capability: str
    memory_mib: int
    pci_device_id: str
    mig: MigGeometry | None
    boards: tuple[Board, ...] = ()

    def __hash__(self) -> int:
        """The hash of the id alone: equal models have equal ids, and models are dict and
        cache keys in resolve (a tier's selector is evaluated once per model), where hashing
        every MIG profile and board each time cost a tenth of the stage."""
        return hash(self.id)

    def board(self, gpus_per_node: int) -> Board | None:
        """The catalog's board of this model with `gpus_per_node` GPUs, if it knows one."""
        return next((b for b in self.boards if b.gpus == gpus_per_node), None)

    @property
    def memory_bytes(self) -> int:
        """The `memory` capacity the DRA driver publishes, in bytes."""
        return self.memory_mib * 2**20


@dataclass(frozen=True)
class Catalog:
    """All known GPU models, looked up by id, alias or product name (case-insensitive)."""

    models: tuple[GpuModel, ...]

    def lookup(self, name: str) -> GpuModel | None:
        """The model a pool's `gpu` names, or None."""
        return self._index().get(name.strip().lower())

    def family(self, name: str) -> tuple[GpuModel, ...]:
        """Every model of a family (e.g. H100), or the one model `name` is, or nothing."""
        wanted = name.strip().lower()
        members = tuple(m for m in self.models if m.family.lower() == wanted)
        if members:
            return members
        model = self.lookup(name)
        return (model,) if model is not None else ()

    def known_names(self) -> list[str]:
        """Model ids and family names, for diagnostics that list what is known."""
        return sorted({m.id for m in self.models} | {m.family for m in self.models})

    def extended(self, models: tuple[GpuModel, ...]) -> Catalog:
        """This catalog with `models` added (checked by compiler.catalog.entries first)."""
        return Catalog(self.models + models)

    @cache  # noqa: B019 - the catalog is immutable and lives for the process
    def _index(self) -> dict[str, GpuModel]:
        index: dict[str, GpuModel] = {}
        for model in self.models:
            for key in (model.id, model.product_name, *model.aliases):
                index[key.lower()] = model
        return index
