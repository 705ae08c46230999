"""A CEL error inside a selector is reported where the character was written, in every YAML
scalar style, and once however many clusters the tier is in (issue 18: the caret pointed at
7:167 on the `cel: >-` line, once per cluster)."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler.catalog import load_catalog
from compiler.diagnostics import CompileError, Span
from compiler.load import load_policies
from compiler.load.scalar import position_in_scalar
from compiler.model import build_policies
from compiler.resolve import resolve
from tests import fleets

BAD = 'device.attributes["gpu.nvidia.com"].productName == "x" &&\n  device.driver >'
"""A syntax error at the end: the parser stops after the last `>`."""


def cel_errors(tmp_path: Path, cel: str) -> list[tuple[int, int]]:
    """Where GF301 points, for a tier whose `cel` field is written as `cel` (YAML text)."""
    files = {
        "east.yaml": fleets.cluster("east"),
        "west.yaml": fleets.cluster("west"),
        "tier.yaml": fleets.HEADER
        + "kind: GpuTier\nmetadata: {name: t}\nspec:\n  select:\n    cel: "
        + cel,
    }
    root = fleets.write_tree(tmp_path, files, migrate_teams=False)
    with pytest.raises(CompileError) as raised:
        resolve(build_policies(load_policies(root)), load_catalog())
    return [
        (d.span.line, d.span.column)
        for d in raised.value.diagnostics
        if d.code == "GF301" and d.span is not None
    ]


def test_a_folded_block_scalar_points_at_the_character_once(tmp_path: Path) -> None:
    cel = ">-\n      " + BAD.replace("\n  ", "\n      ") + "\n"
    # line 6 is `cel: >-`, 7 the first line of the expression, 8 ends with the dangling `>`
    assert cel_errors(tmp_path, cel) == [(8, 22)]


def test_a_literal_block_scalar_points_at_its_line(tmp_path: Path) -> None:
    """The parser reports the end of input as the start of a third line: the caret goes
    after the last character written."""
    cel = "|\n      " + BAD.replace("\n  ", "\n      ") + "\n"
    assert cel_errors(tmp_path, cel) == [(8, 22)]


def test_a_plain_or_quoted_scalar_on_one_line_points_along_it(tmp_path: Path) -> None:
    plain = "device.driver == >\n"
    # the parser stops at the `>`, the 18th character of the value
    assert cel_errors(tmp_path, plain) == [(6, 10 + 17)]
    (tmp_path / "q").mkdir()
    quoted = "'device.driver == >'\n"
    assert cel_errors(tmp_path / "q", quoted) == [(6, 11 + 17)]


def test_a_value_the_source_does_not_rebuild_points_at_the_scalar(tmp_path: Path) -> None:
    """A folded scalar with an empty line folds otherwise: the scalar's start, never a
    wrong character."""
    file = tmp_path / "t.yaml"
    file.write_text("cel: >\n  a\n\n  b >\n")
    start = Span(str(file), 1, 6)
    assert position_in_scalar(start, "a\nb >\n", 2, 3) == start
    assert position_in_scalar(Span(str(tmp_path / "missing.yaml"), 1, 6), "a", 1, 1).line == 1
