"""One error style: every diagnostic is raised through the collector (`Problems`) or `fail`."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from compiler.diagnostics import CompileError, Diagnostic, Problems, Span, fail

COMPILER = Path(__file__).resolve().parent.parent / "compiler"
ERROR = Diagnostic("GF204", "taint 't' names unknown cluster 'c9'", Span("policies/t.yaml", 6, 12))
WARNING = Diagnostic("GF211", "tier 'gpu' is not used by any team's quota", Span("t.yaml", 3, 9))


def test_only_the_diagnostics_package_builds_a_compile_error() -> None:
    builders = []
    for path in sorted(COMPILER.rglob("*.py")):
        if path.parent.name == "diagnostics":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                if name == "CompileError":
                    builders.append(f"{path.relative_to(COMPILER)}:{node.lineno}")
    assert builders == [], "raise through Problems(...).raise_if_errors() or fail(...)"


def test_warnings_alone_raise_nothing() -> None:
    Problems([WARNING]).raise_if_errors()


def test_an_error_raises_every_finding_with_it() -> None:
    problems = Problems([WARNING])
    problems.append(ERROR)
    with pytest.raises(CompileError) as raised:
        problems.raise_if_errors()
    assert set(raised.value.diagnostics) == {ERROR, WARNING}
    assert (problems.errors, problems.warnings) == ([ERROR], [WARNING])


def test_fail_is_one_diagnostic_with_its_hints_and_related_spans() -> None:
    first = Span("policies/a.yaml", 2, 1)
    error = fail(
        "GF102", "duplicate key 'a'", Span("a.yaml", 3, 1), "rename", related=(("first", first),)
    )
    (diagnostic,) = error.diagnostics
    assert (diagnostic.hints, diagnostic.related) == (("rename",), (("first", first),))
