"""Diagnostics print causes before their consequences, whatever the files are called (issue 18:
sorted by file and position, a tier's broken selector in tiers/ printed after the shared
claims and quotas in teams/ that failed because of it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler.diagnostics import CODES, CompileError, Diagnostic, Span
from compiler.diagnostics.causes import LAYERS, causal_layer
from compiler.pipeline import compile_policies
from tests import fleets

POOLS = """
    - {name: h100, nodes: 1, gpu: H100-80GB, gpusPerNode: 8, hostMemory: 2Ti, cpu: 224}
    - {name: ada, nodes: 1, gpu: L40X, gpusPerNode: 4, hostMemory: 512Gi, cpu: 64}
"""
"""A pool of a GPU the catalog does not know (GF201): the cause at the root of the chain."""


def codes_in_order(tmp_path: Path, files: dict[str, str]) -> list[str]:
    root = fleets.write_tree(tmp_path / "policies", files)
    with pytest.raises(CompileError) as caught:
        compile_policies(root)
    return [d.code for d in caught.value.diagnostics]


def test_a_chain_of_consequences_prints_from_its_root(tmp_path: Path) -> None:
    # a-team.yaml sorts first and zz-cluster.yaml last: file order is the reverse of causes
    files = {
        "zz-cluster.yaml": fleets.cluster(pools=POOLS),
        "m-tier.yaml": fleets.tier("ada", "{select: {models: [L40S]}}"),
        "a-team.yaml": fleets.team(
            "a",
            "[{tier: ada, guaranteed: 1}]",
            "  sharedClaims: [{name: shared, tier: ada}]\n",
        ),
    }
    codes = [c for c in codes_in_order(tmp_path, files) if c in {"GF201", "GF303", "GF304"}]
    # the unknown GPU leaves the tier selecting nothing, which leaves the quota without devices
    assert codes == ["GF201", "GF303", "GF304"]


def test_a_broken_selector_prints_before_the_claims_that_needed_its_tier(tmp_path: Path) -> None:
    files = {
        "c.yaml": fleets.cluster(),
        "t.yaml": fleets.tier("training", '{select: {cel: "device.driver =="}}'),
        "a.yaml": fleets.team(
            "a",
            "[{tier: training, guaranteed: 1}]",
            "  sharedClaims: [{name: shared, tier: training}]\n",
        ),
    }
    codes = codes_in_order(tmp_path, files)
    assert "GF240" in codes
    assert codes.index("GF301") < codes.index("GF240")


def test_within_a_layer_diagnostics_sort_by_file_and_position() -> None:
    late, early = Span("b.yaml", 1, 1), Span("a.yaml", 9, 9)
    found = CompileError(
        [
            Diagnostic("GF203", "second", late),
            Diagnostic("GF202", "first", early),
            Diagnostic("GF301", "a cause", Span("z.yaml", 1, 1)),
        ]
    ).diagnostics
    assert [d.message for d in found] == ["a cause", "first", "second"]


def test_every_code_has_a_layer_and_the_layers_run_the_way_causes_do() -> None:
    names = [name for name, _ in LAYERS]
    assert names.index("input") < names.index("platform") < names.index("tiers")
    assert names.index("tiers") < names.index("references") < names.index("quotas")
    for code in CODES:
        assert 0 <= causal_layer(code) < len(LAYERS), code
    for cause, consequence in [
        ("GF107", "GF201"),  # a value the model refuses, then what it would have defined
        ("GF201", "GF303"),  # a pool's unknown GPU, then the tier that selects nothing
        ("GF208", "GF203"),  # no ladder, then the priorities that are not on it
        ("GF303", "GF304"),  # a tier that selects nothing, then each quota of it
        ("GF301", "GF240"),  # a broken selector, then the shared claim of its tier
        ("GF202", "GF218"),  # a grant's unknown tier, then the team's use of it
        ("GF202", "GF211"),  # a misspelt tier, then the real one nobody uses
        ("GF304", "GF401"),  # a quota without devices, then what cannot be served
    ]:
        assert causal_layer(cause) < causal_layer(consequence), (cause, consequence)
