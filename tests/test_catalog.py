"""The GPU catalog and MIG layout enumeration against the placement rules."""

from __future__ import annotations

import dataclasses
from itertools import permutations

import pytest

from compiler.catalog import enumerate_layouts, load_catalog
from compiler.catalog.mig_layouts import is_maximal, placements_fit

CATALOG = load_catalog()
REQUIRED = ["A100-40GB", "A100-80GB", "H100-80GB", "H100-NVL", "H200", "B200", "A30", "L4", "L40S"]


@pytest.mark.parametrize("name", REQUIRED)
def test_required_models_are_present_with_driver_attributes(name: str) -> None:
    model = CATALOG.lookup(name)
    assert model is not None
    assert model.product_name.startswith("NVIDIA ")
    assert model.architecture in {"Ampere", "Hopper", "Blackwell", "Ada Lovelace"}
    assert model.memory_mib > 20_000
    assert (model.mig is None) == (name in {"L4", "L40S"})


def test_an_80gb_h100_reports_less_than_80_gib() -> None:
    model = CATALOG.lookup("nvidia-h100-80gb-hbm3")
    assert model is not None and model.id == "H100-80GB"
    assert 79 * 2**30 < model.memory_bytes < 80 * 2**30


def test_families_expand_to_their_models() -> None:
    assert {m.id for m in CATALOG.family("H100")} == {"H100-80GB", "H100-NVL"}
    assert CATALOG.family("nope") == ()


@pytest.mark.parametrize("name", ["A100-40GB", "H100-80GB", "A30"])
def test_every_layout_has_a_real_placement(name: str) -> None:
    model = CATALOG.lookup(name)
    assert model is not None and model.mig is not None
    geometry = model.mig
    by_name = {p.name: p for p in geometry.profiles}
    for layout in enumerate_layouts(model):
        instances = [by_name[p] for p, n in layout.counts for _ in range(n)]
        assert sum(p.compute_slices for p in instances) <= geometry.compute_slices
        assert sum(p.media for p in instances) <= 1
        assert _placeable(geometry, instances), layout.name


def _placeable(geometry, instances) -> bool:  # type: ignore[no-untyped-def]
    """Brute force: some order and choice of start indices fits without overlap."""

    def place(rest, chosen):  # type: ignore[no-untyped-def]
        if not rest:
            return placements_fit(geometry, chosen)
        head, *tail = rest
        return any(place(tail, [*chosen, (head, s)]) for s in head.starts)

    return any(place(list(order), []) for order in set(permutations(instances)))


def test_a100_40gb_maximal_layouts_match_the_mig_guide() -> None:
    model = CATALOG.lookup("A100-40GB")
    assert model is not None
    maximal = {x.name for x in enumerate_layouts(model) if is_maximal(model, x)}
    assert "1x7g.40gb" in maximal
    assert "1x3g.20gb,1x4g.20gb" in maximal
    assert "2x3g.20gb" in maximal
    assert "7x1g.5gb" in maximal
    assert "3x2g.10gb,1x1g.5gb" not in maximal  # names are sorted by profile
    assert "1x1g.5gb,3x2g.10gb" in maximal
    assert all(not name.startswith("8x") for name in maximal)


# Written by hand from the MIG user guide's placement diagrams (7 compute / 8 memory slices:
# 7g at 0; 4g at 0; 3g at 0 or 4; 2g at 0, 2 or 4; 1g at 0..6), counting only the classic
# profiles. A layout is maximal when no further instance of these profiles fits beside it.
CLASSIC_MAXIMAL = {
    ("7g",),
    ("4g", "3g"),
    ("4g", "2g", "1g"),
    ("4g", "1g", "1g", "1g"),
    ("3g", "3g"),
    ("3g", "2g", "2g"),
    ("3g", "2g", "1g", "1g"),
    ("3g", "1g", "1g", "1g", "1g"),
    ("2g", "2g", "2g", "1g"),
    ("2g", "2g", "1g", "1g", "1g"),
    ("2g", "1g", "1g", "1g", "1g", "1g"),
    ("1g",) * 7,
}


@pytest.mark.parametrize("name", ["A100-40GB", "H100-80GB"])
def test_maximal_classic_layouts_match_the_placement_diagrams(name: str) -> None:
    model = CATALOG.lookup(name)
    assert model is not None and model.mig is not None
    classic = dataclasses.replace(
        model,
        mig=dataclasses.replace(
            model.mig,
            profiles=tuple(p for p in model.mig.profiles if p.gi_profile_id in CLASSIC_GI_IDS),
        ),
    )
    slot_of = {p.name: f"{p.compute_slices}g" for p in model.mig.profiles}
    found = {
        tuple(sorted((slot_of[p] for p, n in layout.counts for _ in range(n)), reverse=True))
        for layout in enumerate_layouts(classic)
        if is_maximal(classic, layout)
    }
    assert found == {tuple(sorted(m, reverse=True)) for m in CLASSIC_MAXIMAL}


CLASSIC_GI_IDS = {19, 14, 9, 5, 0}
"""The GPU-instance profile ids of 1g, 2g, 3g, 4g and 7g on 7-slice GPUs (the reference's
table; 15 is 1g with twice the memory, 20 is 1g+me)."""


def test_media_extension_profiles_appear_at_most_once() -> None:
    model = CATALOG.lookup("H100-80GB")
    assert model is not None
    for layout in enumerate_layouts(model):
        assert sum(n for p, n in layout.counts if p.endswith("+me")) <= 1
    assert any(p == "1g.10gb+me" for layout in enumerate_layouts(model) for p, _ in layout.counts)
