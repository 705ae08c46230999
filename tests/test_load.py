"""Load: positions are kept, and YAML hazards become diagnostics with a location."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler.diagnostics import CompileError
from compiler.load import load_policies
from compiler.load.document import KEY
from compiler.load.loader import parse_documents


def codes_of(text: str) -> list[tuple[str, int, int]]:
    with pytest.raises(CompileError) as caught:
        parse_documents(text, "f.yaml", "policies/f.yaml")
    return [(d.code, d.span.line, d.span.column) for d in caught.value.diagnostics if d.span]


def test_every_node_keeps_its_line_and_column() -> None:
    (doc,) = parse_documents("a: 1\nb:\n  - x: yes\n    y: [1, 2]\n", "f.yaml", "p/f.yaml")
    assert doc.data == {"a": 1, "b": [{"x": "yes", "y": [1, 2]}]}
    assert (doc.span(("b", 0, "x")).line, doc.span(("b", 0, "x")).column) == (3, 8)
    assert doc.span(("b", 0, "y", 1)).line == 4
    assert doc.span(("b", 0, "x", "<key>")).column == 5
    assert doc.span(("b", 0, "missing", "deeper")) == doc.span(("b", 0))


def test_positions_hold_far_down_a_long_file() -> None:
    """Positions are packed into one int per node (its own and its key's): a cluster dump
    runs to millions of lines, past what a narrow packing could hold."""
    far = 2**21
    text = "\n" * far + "top:\n  " + " " * 3000 + "- item\n"
    (doc,) = parse_documents(text, "dump.yaml", "dump.yaml", max_nodes=10)
    assert (doc.span(("top", KEY)).line, doc.span(("top", KEY)).column) == (far + 1, 1)
    assert (doc.span(("top", 0)).line, doc.span(("top", 0)).column) == (far + 2, 3005)
    assert doc.position(("top", 0, KEY)) is None  # a sequence item has no key
    assert doc.span(("top", 0, KEY)) == doc.span(("top", 0))


def test_multi_document_files_skip_empty_documents() -> None:
    docs = parse_documents("a: 1\n---\n---\nb: 2\n", "f.yaml", "p/f.yaml")
    assert [d.data for d in docs] == [{"a": 1}, {"b": 2}]
    assert [d.index for d in docs] == [0, 2]


def test_duplicate_key_is_reported_where_it_repeats() -> None:
    assert codes_of("a: 1\nb: 2\na: 3\n") == [("GF102", 3, 1)]


def test_malformed_yaml_is_a_syntax_error_with_position() -> None:
    assert codes_of("a: [1, 2\nb: 3\n")[0][0] == "GF101"


@pytest.mark.parametrize("text", ["a: !!python/object:os.system {}\n", "a: !custom x\n"])
def test_tags_are_refused(text: str) -> None:
    assert codes_of(text)[0][:2] == ("GF103", 1)


def test_alias_bomb_is_refused_quickly() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    assert codes_of("\n".join(lines) + "\n")[0][0] == "GF120"


def test_non_utf8_file_is_reported(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_bytes(b"a: \xff\xfe\n")
    with pytest.raises(CompileError) as caught:
        load_policies(tmp_path)
    assert caught.value.diagnostics[0].code == "GF109"


def test_missing_or_empty_policy_directory(tmp_path: Path) -> None:
    for root in (tmp_path / "nope", tmp_path):
        with pytest.raises(CompileError) as caught:
            load_policies(root)
        assert caught.value.diagnostics[0].code == "GF110"


def test_files_load_in_path_order_and_origin_is_stable(tmp_path: Path) -> None:
    root = tmp_path / "policies"
    (root / "b").mkdir(parents=True)
    (root / "b" / "x.yaml").write_text("k: 1\n")
    (root / "a.yml").write_text("k: 2\n")
    docs = load_policies(root)
    assert [d.origin for d in docs] == ["policies/a.yml", "policies/b/x.yaml"]


def test_files_are_named_from_the_working_directory_even_inside_the_policies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Diagnostics name a file relative to the working directory when it is below it, else
    as the policy directory was given: also when working inside the policy directory."""
    (tmp_path / "pol" / "teams" / "sub").mkdir(parents=True)
    for relative in ("top.yaml", "teams/t.yaml", "teams/sub/s.yaml"):
        (tmp_path / "pol" / relative).write_text("a: 1\n")
    monkeypatch.chdir(tmp_path / "pol" / "teams")
    for root, top in ((Path(".."), "../top.yaml"), (tmp_path / "pol", f"{tmp_path}/pol/top.yaml")):
        names = sorted(document.file for document in load_policies(root, []))
        assert names == sorted([top, "sub/s.yaml", "t.yaml"])
    monkeypatch.chdir(tmp_path)
    names = sorted(document.file for document in load_policies(Path("pol"), []))
    assert names == ["pol/teams/sub/s.yaml", "pol/teams/t.yaml", "pol/top.yaml"]
