"""The oracle's reading of the GPU models a fleet describes itself (GpuModel documents), beside
its own tables of the built-in ones (tests/oracle_gpus.py), as the README's policy language
says: a pool's `gpu` names a model by its id (`metadata.name`) or an alias; a tier's `models`
entry names a family (every model of it, built in or not) or else one model; a model's boards
give the GPU groups of pools with as many GPUs per node. Its MIG profiles are placed by their
own `starts` and slice counts, like the built-in slots (tests/oracle_mig.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from compiler.model.gpu_model import GpuModel
from tests.oracle_gpus import BOARDS, GPUS, Board, Geometry, Gpu, Profile, Slot


@dataclass(frozen=True)
class Models:
    """The built-in models and the fleet's own, looked up as pools and tiers name them."""

    own: tuple[Gpu, ...] = ()
    aliases: dict[str, tuple[str, ...]] = field(default_factory=dict, hash=False)
    """Model id -> its aliases (the fleet's models)."""
    boards: dict[str, tuple[Board, ...]] = field(default_factory=dict, hash=False)
    """Model id -> its boards (the fleet's models)."""

    @property
    def every(self) -> tuple[Gpu, ...]:
        """Every model, built in first."""
        return (*GPUS, *self.own)

    def gpu(self, name: str) -> Gpu | None:
        """The model a pool's `gpu` names: a built-in one as tests/oracle_gpus.py reads it,
        else a fleet model by its id or an alias, in any case."""
        wanted = name.lower()
        for model in GPUS:
            if wanted in (model.id.lower(), model.product_name.lower().replace(" ", "-")):
                return model
        return next(
            (
                m
                for m in self.own
                if wanted in (m.id.lower(), *(a.lower() for a in self.aliases.get(m.id, ())))
            ),
            None,
        )

    def selected_by_name(self, name: str) -> tuple[Gpu, ...]:
        """The models a selector's `models` entry names: a family, else one model's id or
        alias."""
        wanted = name.lower()
        family = tuple(m for m in self.every if m.family.lower() == wanted)
        if family:
            return family
        model = self.gpu(name)
        return (model,) if model is not None else ()

    def board(self, model: Gpu, width: int) -> Board | None:
        """The board of `model` with `width` GPUs, if one is known."""
        boards = self.boards.get(model.id) or ((BOARDS[model.id],) if model.id in BOARDS else ())
        return next((b for b in boards if b.gpus == width), None)


def read_models(documents: Sequence[GpuModel]) -> Models:
    """The fleet's own models as the oracle reads their documents."""
    own, aliases, boards = [], {}, {}
    for document in documents:
        spec = document.spec
        geometry, profiles = None, ()
        if spec.mig is not None:
            geometry = Geometry(
                spec.mig.memory_slices,
                spec.mig.compute_slices,
                {
                    p.name: Slot(p.compute_slices, p.memory_slices, tuple(p.starts), p.media)
                    for p in spec.mig.profiles
                },
            )
            profiles = tuple(
                Profile(p.name, p.name, (Fraction(p.memory_mib, 1024),) * 2)
                for p in spec.mig.profiles
            )
        model = Gpu(
            document.name,
            spec.family or document.name,
            spec.product_name,
            spec.architecture,
            spec.memory_mib,
            geometry,
            profiles,
        )
        own.append(model)
        aliases[model.id] = tuple(spec.aliases)
        boards[model.id] = tuple(
            Board(b.gpus, b.numa_node or 0, b.pcie_root or 0) for b in spec.boards
        )
    return Models(tuple(own), aliases, boards)
