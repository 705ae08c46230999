"""Resolve: selectors evaluated against the inventory, references checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler.catalog import load_catalog
from compiler.diagnostics import CompileError
from compiler.ir import ResolvedFleet
from compiler.load import load_policies
from compiler.model import build_policies
from compiler.resolve import resolve
from tests import fleets
from tests.conftest import PolicyWriter

POOLS = """
    - {name: h100, nodes: 2, gpu: H100-80GB, gpusPerNode: 8, hostMemory: 2Ti, cpu: 224,
       mig: allowed}
    - {name: l40s, nodes: 2, gpu: L40S, gpusPerNode: 4, hostMemory: 512Gi, cpu: 64}
"""


def resolve_dir(root: Path) -> ResolvedFleet:
    return resolve(build_policies(load_policies(root)), load_catalog())


def failure(root: Path) -> list[tuple[str, str]]:
    with pytest.raises(CompileError) as caught:
        resolve_dir(root)
    return [(d.code, d.message) for d in caught.value.diagnostics if d.code != "GF211"]


def kinds_of(fleet: ResolvedFleet, tier: str) -> list[str]:
    return [str(k.key) for k in fleet.clusters[0].tier(tier).kinds]


def test_structured_selector_with_79gi_matches_h100_but_80gi_matches_nothing(
    write_policies: PolicyWriter,
) -> None:
    root = write_policies(
        {
            "c.yaml": fleets.cluster(pools=POOLS),
            "t.yaml": fleets.tier("big", "{select: {models: [H100], minMemory: 79Gi}}"),
            "team.yaml": fleets.team("a", "[{tier: big, guaranteed: 1}]"),
        }
    )
    assert kinds_of(resolve_dir(root), "big") == ["h100/gpu"]
    (root / "t.yaml").write_text(fleets.tier("big", "{select: {models: [H100], minMemory: 80Gi}}"))
    codes = [code for code, _ in failure(root)]
    assert "GF303" in codes


def test_partition_tier_matches_mig_devices_only(write_policies: PolicyWriter) -> None:
    root = write_policies(
        {
            "c.yaml": fleets.cluster(pools=POOLS),
            "t.yaml": fleets.tier("slice", "{partition: 3g.40gb}"),
            "any.yaml": fleets.tier(
                "any", '{select: {cel: "device.driver == \\"gpu.nvidia.com\\""}}'
            ),
            "team.yaml": fleets.team(
                "a", "[{tier: slice, guaranteed: 1}, {tier: any, guaranteed: 1}]"
            ),
        }
    )
    fleet = resolve_dir(root)
    assert kinds_of(fleet, "slice") == ["h100/mig-3g.40gb"]
    assert "l40s/gpu" in kinds_of(fleet, "any") and "h100/mig-1g.10gb" in kinds_of(fleet, "any")


def test_partition_on_a_gpu_without_mig_says_so(write_policies: PolicyWriter) -> None:
    root = write_policies(
        {
            "c.yaml": fleets.cluster(pools=POOLS),
            "t.yaml": fleets.tier("slice", "{select: {models: [L40S]}, partition: 3g.40gb}"),
        }
    )
    ((code, message),) = failure(root)
    assert code == "GF210" and "L40S" in message and "no MIG" in message


def test_unknown_gpu_model_lists_the_known_ones(write_policies: PolicyWriter) -> None:
    root = write_policies({"c.yaml": fleets.cluster(pools=POOLS.replace("L40S", "RTX-9090"))})
    with pytest.raises(CompileError) as caught:
        resolve_dir(root)
    (diagnostic,) = [d for d in caught.value.diagnostics if d.code == "GF201"]
    assert "RTX-9090" in diagnostic.message
    assert "H100-80GB" in diagnostic.hints[0] and "L40S" in diagnostic.hints[0]


def test_cel_type_error_points_into_the_expression(write_policies: PolicyWriter) -> None:
    root = write_policies(
        {
            "c.yaml": fleets.cluster(pools=POOLS),
            "t.yaml": fleets.tier("bad", '{select: {cel: "quantity(\\"1\\") > 1"}}'),
        }
    )
    with pytest.raises(CompileError) as caught:
        resolve_dir(root)
    (diagnostic,) = [d for d in caught.value.diagnostics if d.code != "GF211"]
    assert diagnostic.code == "GF301"
    assert diagnostic.span is not None and diagnostic.span.line == 4


def test_dangling_references_are_each_reported(write_policies: PolicyWriter) -> None:
    root = write_policies(
        {
            "c.yaml": fleets.cluster(pools=POOLS),
            "l.yaml": fleets.LADDER,
            "t.yaml": fleets.tier("gpu", "{select: {models: [L40S]}}"),
            "a.yaml": fleets.team(
                "a",
                "[{tier: nope, guaranteed: 1}, {tier: gpu, guaranteed: 4, limit: 2}]",
                "  priorities: [urgent]\n  clusters: [c9]\n",
            ),
            "b.yaml": fleets.team("b", "[]").replace("namespaces: [b]", "namespaces: [a]"),
        }
    )
    codes = sorted(code for code, _ in failure(root))
    assert codes == ["GF202", "GF203", "GF204", "GF205", "GF206"]


def test_quota_must_name_its_namespace_when_the_team_has_several(
    write_policies: PolicyWriter,
) -> None:
    root = write_policies(
        {
            "c.yaml": fleets.cluster(pools=POOLS),
            "t.yaml": fleets.tier("gpu", "{select: {models: [L40S]}}"),
            "a.yaml": fleets.team("a", "[{tier: gpu, guaranteed: 1}]").replace(
                "namespaces: [a]", "namespaces: [a, a-dev]"
            ),
        }
    )
    assert [code for code, _ in failure(root)] == ["GF207"]


def test_priority_ladder_rules(write_policies: PolicyWriter) -> None:
    ladder = fleets.LADDER.replace(
        "{name: low, value: 10, preemption: Never}",
        "{name: system-x, value: 10}\n    - {name: high, value: 5}\n    - {name: high, value: 6}",
    )
    root = write_policies({"c.yaml": fleets.cluster(pools=POOLS), "l.yaml": ladder})
    assert sorted(code for code, _ in failure(root)) == ["GF208", "GF208", "GF208"]
