"""One catalog entry, from its spec to a model: the rules every GPU model is held to.

The built-in catalog (gpus.yaml) and a fleet's own `GpuModel` documents are both read into a
`GpuModelSpec` and go through the functions here, so a model the platform describes is
checked exactly as a built-in one: its MIG placements fit the GPU's slices and do not overlap,
profile names and GPU-instance ids are unique, its boards' groups divide their GPUs, and none
of its names is already another model's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from compiler.catalog.catalog import Board, GpuModel, MigGeometry, MigProfile
from compiler.model.gpu_model import BoardSpec, GpuModelSpec, MigSpec

EntryPath = tuple[str | int, ...]


@dataclass(frozen=True)
class EntryProblem:
    """Why an entry is refused: where (a path in its spec; `()` for the model's name itself),
    what, and how to fix it."""

    path: EntryPath
    message: str
    hint: str
    clash: bool = False
    """Whether the entry is fine on its own but names what another model is named."""


def entry_problems(spec: GpuModelSpec) -> list[EntryProblem]:
    """Every rule the entry breaks on its own (its names against others: `name_clashes`)."""
    found = list(_mig_problems(spec.mig, spec.memory_mib)) if spec.mig else []
    found.extend(_board_problems(spec.boards))
    return found


def catalog_model(model_id: str, spec: GpuModelSpec) -> GpuModel:
    """The catalog's record of the entry named `model_id` (an entry without problems)."""
    mig = spec.mig
    return GpuModel(
        id=model_id,
        aliases=tuple(spec.aliases),
        family=spec.family or model_id,
        product_name=spec.product_name,
        architecture=spec.architecture,
        cuda_compute_capability=spec.cuda_compute_capability,
        memory_mib=spec.memory_mib,
        pci_device_id=spec.pci_device_id,
        mig=None
        if mig is None
        else MigGeometry(
            mig.memory_slices,
            mig.compute_slices,
            tuple(
                MigProfile(
                    name=p.name,
                    gi_profile_id=p.gi_profile_id,
                    compute_slices=p.compute_slices,
                    memory_slices=p.memory_slices,
                    starts=tuple(sorted(p.starts)),
                    media=p.media,
                    memory_mib=p.memory_mib,
                )
                for p in mig.profiles
            ),
        ),
        boards=tuple(_board(b) for b in spec.boards),
    )


def checked_model(
    model_id: str, spec: GpuModelSpec, known: Iterable[GpuModel]
) -> tuple[GpuModel, list[EntryProblem]]:
    """The entry as a catalog model, and every rule it breaks, its names against `known`."""
    model = catalog_model(model_id, spec)
    return model, [*entry_problems(spec), *name_clashes(known, model)]


def name_clashes(known: Iterable[GpuModel], model: GpuModel) -> list[EntryProblem]:
    """Where `model`'s names would make a name pools or tiers use mean another model: an id,
    alias or product name already another model's, or a family that is another model's name
    (a family another model already has is joined, e.g. `H100` for an H100 PCIe)."""
    names: dict[str, GpuModel] = {}
    families: dict[str, GpuModel] = {}
    for other in known:
        for name in _names(other):
            names.setdefault(name.lower(), other)
        families.setdefault(other.family.lower(), other)
    found = []
    for path, name in _named(model):
        taken = names.get(name.lower())
        if taken is not None:
            found.append(
                EntryProblem(
                    path,
                    f"{name!r} already names GPU model {taken.id} ({_as(taken, name)})",
                    f"the catalog already has it: name {taken.id!r} in the pool's `gpu`, or "
                    "give this model other names",
                    clash=True,
                )
            )
            continue
        owner = families.get(name.lower())
        if owner is not None and name.lower() != model.family.lower():
            found.append(
                EntryProblem(
                    path,
                    f"{name!r} is the family of GPU model {owner.id}: a tier naming it "
                    "would not select this model",
                    f"join the family (`family: {owner.family}`) or choose another name",
                    clash=True,
                )
            )
    family = model.family.lower()
    if family not in families and family in names and family not in map(str.lower, _names(model)):
        named = names[family]
        found.append(
            EntryProblem(
                ("family",),
                f"family {model.family!r} is the name of GPU model {named.id}: a tier "
                f"naming it would select this model too",
                "choose a family no model is named",
                clash=True,
            )
        )
    return found


def _names(model: GpuModel) -> list[str]:
    return [model.id, model.product_name, *model.aliases]


def _named(model: GpuModel) -> Iterator[tuple[EntryPath, str]]:
    yield (), model.id
    yield ("productName",), model.product_name
    for index, alias in enumerate(model.aliases):
        yield ("aliases", index), alias


def _as(model: GpuModel, name: str) -> str:
    wanted = name.lower()
    if model.id.lower() == wanted:
        return "its id"
    if model.product_name.lower() == wanted:
        return "its product name"
    return "an alias"


def _mig_problems(mig: MigSpec, memory_mib: int) -> Iterator[EntryProblem]:
    seen_names: dict[str, int] = {}
    seen_ids: dict[int, int] = {}
    for index, profile in enumerate(mig.profiles):
        path: EntryPath = ("mig", "profiles", index)
        first = seen_names.setdefault(profile.name.lower(), index)
        if first != index:
            yield EntryProblem(
                (*path, "name"),
                f"MIG profile {profile.name} is listed twice (first as profile {first})",
                "list each profile once",
            )
        first = seen_ids.setdefault(profile.gi_profile_id, index)
        if first != index:
            yield EntryProblem(
                (*path, "giProfileId"),
                f"MIG profiles {mig.profiles[first].name} and {profile.name} have the same "
                f"GPU-instance profile id {profile.gi_profile_id}",
                "each profile has its own id: see `nvidia-smi mig -lgip`",
            )
        if profile.media != profile.name.endswith("+me"):
            yield EntryProblem(
                (*path, "media"),
                f"MIG profile {profile.name} "
                + (
                    "holds the media extensions but its name lacks `+me`"
                    if profile.media
                    else "is named `+me` but does not hold the media extensions"
                ),
                "a profile holds the media extensions (`media: true`) exactly when its name "
                "ends in `+me`",
            )
        for field, size, total in (
            ("computeSlices", profile.compute_slices, mig.compute_slices),
            ("memorySlices", profile.memory_slices, mig.memory_slices),
        ):
            if size > total:
                yield EntryProblem(
                    (*path, field),
                    f"MIG profile {profile.name} takes {size} {_words(field)}, but the GPU has "
                    f"{total}",
                    f"a profile takes at most the GPU's {_words(field)}",
                )
        if profile.memory_mib > memory_mib:
            yield EntryProblem(
                (*path, "memoryMiB"),
                f"MIG profile {profile.name} has {profile.memory_mib} MiB, more than the "
                f"GPU's {memory_mib}",
                "an instance's memory is part of the GPU's: see `nvidia-smi mig -lgip`",
            )
        yield from _placement_problems(
            profile.name, path, profile.starts, profile.memory_slices, mig.memory_slices
        )


def _placement_problems(
    name: str, path: EntryPath, starts: list[int], size: int, slices: int
) -> Iterator[EntryProblem]:
    """Each start must leave room for the instance, and no two placements overlap."""
    hint = (
        "placements are the memory-slice indices an instance may start at, as "
        "`nvidia-smi mig -lgipp` lists them"
    )
    for index, start in enumerate(starts):
        if start + size > slices:
            yield EntryProblem(
                (*path, "starts", index),
                f"MIG profile {name} placed at memory slice {start} would end at slice "
                f"{start + size - 1}, past the GPU's {slices} memory slices (0 to {slices - 1})",
                hint,
            )
        for other_index, other in enumerate(starts[:index]):
            if abs(start - other) < size:
                yield EntryProblem(
                    (*path, "starts", index),
                    f"MIG profile {name}: the placement at memory slice {start} overlaps the "
                    f"one at {other} (placement {other_index}; an instance spans {size})",
                    hint,
                )
                break


def _board_problems(boards: list[BoardSpec]) -> Iterator[EntryProblem]:
    seen: dict[int, int] = {}
    for index, board in enumerate(boards):
        path: EntryPath = ("boards", index)
        first = seen.setdefault(board.gpus, index)
        if first != index:
            yield EntryProblem(
                (*path, "gpus"),
                f"two boards of {board.gpus} GPUs ({boards[first].name} and {board.name})",
                "a pool picks the board by its gpusPerNode: keep one per GPU count",
            )
        yield from _group_problems(path, board)


def _group_problems(path: EntryPath, board: BoardSpec) -> Iterator[EntryProblem]:
    """A NUMA node's GPUs must divide the board's, a PCIe root's those of a NUMA node (or of
    the board, when the NUMA grouping is not given)."""
    hint = (
        "groups are consecutive GPU indices: each size must divide the board's GPUs, and a "
        "PCIe root's GPUs sit on one NUMA node"
    )
    if board.numa_node is not None and board.gpus % board.numa_node:
        yield EntryProblem(
            (*path, "numaNode"),
            f"board {board.name}: numaNode groups of {board.numa_node} GPUs do not divide its "
            f"{board.gpus} GPUs",
            hint,
        )
        return
    outer, words = (
        (board.gpus, "GPUs") if board.numa_node is None else (board.numa_node, "GPUs per NUMA node")
    )
    if board.pcie_root is not None and outer % board.pcie_root:
        yield EntryProblem(
            (*path, "pcieRoot"),
            f"board {board.name}: pcieRoot groups of {board.pcie_root} GPUs do not divide its "
            f"{outer} {words}",
            hint,
        )


def _board(board: BoardSpec) -> Board:
    return Board(
        id=board.name,
        gpus=board.gpus,
        numa_node=board.numa_node,
        pcie_root=board.pcie_root,
        source=" ".join(board.source.split()),
        unverified=tuple(board.unverified),
    )


def _words(field: str) -> str:
    return {"computeSlices": "compute slices", "memorySlices": "memory slices"}[field]
