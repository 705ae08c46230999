"""GPU facts for the independent oracle and plan checker, written from the sources, not copied
from compiler/catalog (a mistake there must not pass here too).

Sources: /work/shared/reference/nvidia-gpus.md, which summarises NVIDIA's MIG user guide
("supported MIG profiles" tables and placement diagrams), nvidia-smi output pasted in public
issues (product names, memory.total) and published `nvidia-smi topo -m` dumps of HGX and DGX
boards. Model ids and families are the policy language's names (README, "The policy language").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

GIB = 2**30
MIB = 2**20


@dataclass(frozen=True)
class Slot:
    """A MIG GPU-instance profile slot: compute slices, memory slices it spans, the memory
    slices it may start at, and whether it holds the GPU's media extensions (`+me`)."""

    compute: int
    size: int
    starts: tuple[int, ...]
    media: bool = False


@dataclass(frozen=True)
class Geometry:
    """A GPU's MIG geometry: its memory and compute slices and the placement of each slot."""

    memory_slices: int
    compute_slices: int
    slots: dict[str, Slot] = field(hash=False)


SEVEN_SLICE = Geometry(
    # "MIG GPU-instance profiles (7-compute-slice GPUs; 8 memory slices)": placements
    # {start memory slices}:size; no overlap in memory slices; at most 7 compute slices.
    memory_slices=8,
    compute_slices=7,
    slots={
        "1g": Slot(1, 1, (0, 1, 2, 3, 4, 5, 6)),
        "1g+me": Slot(1, 1, (0, 1, 2, 3, 4, 5, 6), media=True),
        "1g-2x": Slot(1, 2, (0, 2, 4, 6)),
        "2g": Slot(2, 2, (0, 2, 4)),
        "3g": Slot(3, 4, (0, 4)),
        "4g": Slot(4, 4, (0,)),
        "7g": Slot(7, 8, (0,)),
    },
)
FOUR_SLICE = Geometry(
    # A30: 1g {0,1,2,3}:1, 2g {0,2}:2, 4g {0}:4; the `+me` slots' placements are not listed in
    # the reference: taken as their plain slot's (at most one `+me` instance per GPU).
    memory_slices=4,
    compute_slices=4,
    slots={
        "1g": Slot(1, 1, (0, 1, 2, 3)),
        "1g+me": Slot(1, 1, (0, 1, 2, 3), media=True),
        "2g": Slot(2, 2, (0, 2)),
        "2g+me": Slot(2, 2, (0, 2), media=True),
        "4g": Slot(4, 4, (0,)),
    },
)
MAX_MEDIA_INSTANCES = 1
"""`+me` (media extensions): at most one instance per GPU."""


@dataclass(frozen=True)
class Profile:
    """A MIG profile of one model: its name, slot, and instance memory as `nvidia-smi mig
    -lgip` prints it, in GiB (low, high: drivers differ; None where no source gives it)."""

    name: str
    slot: str
    memory_gib: tuple[Fraction, Fraction] | None = None


@dataclass(frozen=True)
class Gpu:
    """One GPU model as the NVIDIA DRA driver publishes it, with its MIG profiles."""

    id: str
    family: str
    product_name: str
    architecture: str
    memory_mib: int
    geometry: Geometry | None = None
    profiles: tuple[Profile, ...] = ()

    def profile(self, name: str) -> Profile | None:
        """The MIG profile called `name`, if the model has it."""
        return next((p for p in self.profiles if p.name == name), None)

    def instance_memory(self, name: str) -> tuple[Fraction, Fraction] | None:
        """A MIG profile's memory in GiB (low, high): its own figure, else that of a profile
        spanning as many memory slices (an instance's memory is its slices': the reference
        lists 1g.20gb with 2g.20gb and 3g.40gb with 4g.40gb); None where no source says."""
        profile = self.profile(name)
        if profile is None or self.geometry is None:
            return None
        size = self.geometry.slots[profile.slot].size
        same = [p for p in self.profiles if self.geometry.slots[p.slot].size == size]
        return profile.memory_gib or next((p.memory_gib for p in same if p.memory_gib), None)


def _gib(low: str, high: str | None = None) -> tuple[Fraction, Fraction]:
    return Fraction(low), Fraction(high or low)


def _seven(names: dict[str, str], memory: dict[str, tuple[Fraction, Fraction]]) -> tuple:  # type: ignore[type-arg]
    return tuple(Profile(name, slot, memory.get(name)) for slot, name in names.items())


def _names(one: int, two: int, three: int, seven: int) -> dict[str, str]:
    """The profile names of a 7-slice GPU from the sizes (GB) its table column gives."""
    return {
        "1g": f"1g.{one}gb",
        "1g+me": f"1g.{one}gb+me",
        "1g-2x": f"1g.{two}gb",
        "2g": f"2g.{two}gb",
        "3g": f"3g.{three}gb",
        "4g": f"4g.{three}gb",
        "7g": f"7g.{seven}gb",
    }


def _shared(memory: dict[str, tuple[Fraction, Fraction]]) -> dict[str, tuple[Fraction, Fraction]]:
    """The `+me` twin of a 1g profile has its memory."""
    return memory | {f"{k}+me": v for k, v in memory.items() if k.startswith("1g.")}


GPUS: tuple[Gpu, ...] = (
    # id, family, productName (NVML), architecture, memory.total MiB: "What the driver reports".
    Gpu(
        "A100-40GB",
        "A100",
        "NVIDIA A100-SXM4-40GB",
        "Ampere",
        40960,
        SEVEN_SLICE,
        _seven(
            _names(5, 10, 20, 40),
            _shared(
                {
                    "1g.5gb": _gib("4.75"),
                    "2g.10gb": _gib("9.62", "9.75"),
                    "3g.20gb": _gib("19.50", "19.62"),
                    "7g.40gb": _gib("39.25", "39.50"),
                }
            ),
        ),
    ),
    Gpu(
        "A100-80GB",
        "A100",
        "NVIDIA A100-SXM4-80GB",
        "Ampere",
        81920,
        SEVEN_SLICE,
        _seven(
            _names(10, 20, 40, 80),
            _shared(
                {
                    "1g.10gb": _gib("9.50"),
                    "2g.20gb": _gib("19.50"),
                    "3g.40gb": _gib("39.25"),
                    "7g.80gb": _gib("79.00"),
                }
            ),
        ),
    ),
    Gpu(
        "H100-80GB",
        "H100",
        "NVIDIA H100 80GB HBM3",
        "Hopper",
        81559,
        SEVEN_SLICE,
        _seven(
            _names(10, 20, 40, 80),
            _shared(
                {
                    "1g.10gb": _gib("9.75"),
                    "1g.20gb": _gib("19.62", "19.625"),
                    "2g.20gb": _gib("19.62", "19.625"),
                    "3g.40gb": _gib("39.50"),
                    "4g.40gb": _gib("39.50"),
                    "7g.80gb": _gib("79.25"),
                }
            ),
        ),
    ),
    Gpu(
        "H100-NVL",
        "H100",
        "NVIDIA H100 NVL",
        "Hopper",
        95830,
        SEVEN_SLICE,
        _seven(_names(12, 24, 47, 94), {}),
    ),
    Gpu(
        "H200",
        "H200",
        "NVIDIA H200",
        "Hopper",
        143771,
        SEVEN_SLICE,
        _seven(
            _names(18, 35, 71, 141),
            _shared(
                {
                    "1g.18gb": _gib("16.00"),
                    "1g.35gb": _gib("32.25"),
                    "2g.35gb": _gib("32.25"),
                    "3g.71gb": _gib("69.50"),
                    "4g.71gb": _gib("69.50"),
                    "7g.141gb": _gib("139.75"),
                }
            ),
        ),
    ),
    Gpu(
        "B200",
        "B200",
        "NVIDIA B200",
        "Blackwell",
        183359,
        SEVEN_SLICE,
        _seven(_names(23, 45, 90, 180), {}),
    ),
    Gpu(
        "A30",
        "A30",
        "NVIDIA A30",
        "Ampere",
        24576,
        FOUR_SLICE,
        (
            Profile("1g.6gb", "1g", _gib("5.81")),
            Profile("1g.6gb+me", "1g+me", _gib("5.81")),
            Profile("2g.12gb", "2g", _gib("11.69")),
            Profile("2g.12gb+me", "2g+me", _gib("11.69")),
            Profile("4g.24gb", "4g"),
        ),
    ),
    Gpu("L4", "L4", "NVIDIA L4", "Ada Lovelace", 23034),
    Gpu("L40S", "L40S", "NVIDIA L40S", "Ada Lovelace", 46068),
)


def gpu(name: str) -> Gpu | None:
    """The model a pool's `gpu` names: its id, or its product name as GPU feature discovery
    labels it (`nvidia-h100-80gb-hbm3`), either in any case."""
    wanted = name.lower()
    for model in GPUS:
        if wanted in (model.id.lower(), model.product_name.lower().replace(" ", "-")):
            return model
    return None


def selected_by_name(name: str) -> tuple[Gpu, ...]:
    """The models a selector's `models` entry names: a model id or a family."""
    wanted = name.lower()
    return tuple(m for m in GPUS if wanted in (m.id.lower(), m.family.lower()))


@dataclass(frozen=True)
class Board:
    """How the GPUs of one kind of node group: GPUs per NUMA node and per PCIe root
    (consecutive indices)."""

    gpus: int
    numa_node: int
    pcie_root: int


BOARDS: dict[str, Board] = {
    # "GPU topology on 8-GPU HGX nodes": 8x H100 SXM shows GPU0-3 on NUMA node 0 and GPU4-7 on
    # NUMA node 1; GPU pairs share a PCIe switch (DGX A100, typically 2 per root); DGX A100
    # (NPS4) has 2 GPUs per NUMA node. H200 and B200 HGX boards are taken as the H100's.
    "H100-80GB": Board(8, 4, 2),
    "H200": Board(8, 4, 2),
    "B200": Board(8, 4, 2),
    "A100-40GB": Board(8, 2, 2),
    "A100-80GB": Board(8, 2, 2),
}
