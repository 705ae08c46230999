"""Model: strict validation, with each error mapped to its file, line and column."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler.diagnostics import CompileError
from compiler.load.loader import parse_documents
from compiler.model import build_policies
from compiler.model.build import build_object
from tests import fleets


def errors(text: str) -> list[tuple[str, int, int, str]]:
    documents = parse_documents(text, "t.yaml", "policies/t.yaml")
    with pytest.raises(CompileError) as caught:
        build_policies(documents)
    return [
        (d.code, d.span.line, d.span.column, d.message) for d in caught.value.diagnostics if d.span
    ]


def test_unknown_field_points_at_the_key_and_suggests_the_spelling() -> None:
    text = fleets.cluster().replace("gpusPerNode", "gpuPerNode")
    documents = parse_documents(text, "t.yaml", "policies/t.yaml")
    with pytest.raises(CompileError) as caught:
        build_policies(documents)
    unknown = [d for d in caught.value.diagnostics if d.code == "GF106"]
    assert len(unknown) == 1
    assert unknown[0].span is not None and unknown[0].span.line == 7
    assert unknown[0].hints == ("did you mean `gpusPerNode`?",)


def test_wrong_type_is_reported_at_the_value() -> None:
    text = fleets.cluster().replace("nodes: 2", "nodes: two")
    (found,) = errors(text)
    assert found[:3] == ("GF107", 7, 27)
    assert "spec.nodePools.0.nodes" in found[3]


def test_unquoted_version_gets_a_quoting_hint() -> None:
    text = fleets.cluster().replace('"1.36"', "1.36")
    documents = parse_documents(text, "t.yaml", "policies/t.yaml")
    with pytest.raises(CompileError) as caught:
        build_policies(documents)
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.code == "GF107"
    assert diagnostic.hints and "quote" in diagnostic.hints[0]


def test_missing_field_names_the_field() -> None:
    (found,) = errors(fleets.tier("t", "{}").replace("spec: {}\n", ""))
    assert found[0] == "GF108" and "`spec`" in found[3]


def test_unknown_kind_and_api_version() -> None:
    assert errors("apiVersion: gpufleet.dev/v1alpha1\nkind: Gpu\n")[0][0] == "GF105"
    assert errors("apiVersion: v1\nkind: Team\n")[0][0] == "GF105"
    assert errors("- 1\n")[0][0] == "GF104"


def test_names_are_normalised_and_checked_as_dns_labels() -> None:
    documents = parse_documents(fleets.team("ML_Research", "[]"), "t.yaml", "policies/t.yaml")
    team = build_object(documents[0])
    assert team.name == "ml-research"
    assert team.spec.namespaces == ["ml-research"]
    bad = errors(fleets.team("-bad-", "[]"))
    assert bad and all(code == "GF107" and "DNS-1123" in message for code, _, _, message in bad)


def test_the_same_object_twice_is_an_error_with_both_places() -> None:
    text = fleets.tier("t", "{}") + "---\n" + fleets.tier("T", "{}")
    documents = parse_documents(text, "t.yaml", "policies/t.yaml")
    with pytest.raises(CompileError) as caught:
        build_policies(documents)
    (duplicate,) = caught.value.diagnostics
    assert duplicate.code == "GF112"
    assert duplicate.related[0][1].line == 3


def test_quantities_are_exact() -> None:
    documents = parse_documents(fleets.cluster(), "t.yaml", "policies/t.yaml")
    pool = build_object(documents[0]).spec.node_pools[0]  # type: ignore[attr-defined]
    assert pool.host_memory == 2 * 2**40
    assert pool.cpu == 224


def test_the_quoting_hint_quotes_the_version_as_written(tmp_path: Path) -> None:
    """`1.30` is the number 1.3 to YAML: the hint says to quote "1.30", not "1.3"."""
    file = tmp_path / "cluster.yaml"
    file.write_text(fleets.cluster().replace('"1.36"', "1.30"))
    documents = parse_documents(file.read_text(), str(file), "policies/cluster.yaml")
    with pytest.raises(CompileError) as caught:
        build_policies(documents)
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.hints == ('quote the value: "1.30" (YAML reads 1.30 as the number 1.3)',)
