"""The oracle and the plan checker stay independent of what they judge: neither they nor any
test module they import (tests.*, followed transitively) imports the compiler's solver, its
resolver or its catalog. They may read the policy as the user wrote it (compiler.load, the
models of compiler.model) and use compiler.diagnostics' CompileError; nothing else of the
compiler. Written as an allow-list, so a new compiler package is refused until judged."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
ROOTS = ("oracle", "plan_checker")
ALLOWED = ("compiler.load", "compiler.model", "compiler.diagnostics")
"""The input (the policy as loaded and modelled) and the error type; nothing derived."""


def imports(source: str, package: str = "tests") -> set[str]:
    """Every module a source imports (relative imports resolved against `package`); dynamic
    imports (`importlib.import_module`, `__import__`) come out as `<dynamic>`."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    [*package.split(".")[: len(package.split(".")) - node.level + 1], base]
                ).strip(".")
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            if name in ("importlib.import_module", "import_module", "__import__"):
                found.add("<dynamic>")
    return found


def refused(modules: set[str]) -> set[str]:
    """The compiler modules (or dynamic imports) among `modules` that are not allowed."""
    return {
        m
        for m in modules
        if m == "<dynamic>"
        or (
            (m == "compiler" or m.startswith("compiler."))
            and not any(m == a or m.startswith(a + ".") for a in ALLOWED)
        )
    }


def closure() -> dict[str, set[str]]:
    """tests module -> what it imports, for the roots and every tests module they import."""
    seen: dict[str, set[str]] = {}
    todo = list(ROOTS)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        path = TESTS / f"{name}.py"
        seen[name] = imports(path.read_text(encoding="utf-8"))
        todo += [
            m.removeprefix("tests.")
            for m in seen[name]
            if m.startswith("tests.") and (TESTS / f"{m.removeprefix('tests.')}.py").is_file()
        ]
    return seen


def test_the_oracle_and_the_plan_checker_import_nothing_they_judge() -> None:
    modules = closure()
    assert {name: refused(found) for name, found in modules.items() if refused(found)} == {}
    assert {
        "oracle",
        "plan_checker",
        "oracle_policy",
        "oracle_mig",
        "oracle_host",
        "oracle_models",
    } <= set(modules)


@pytest.mark.parametrize(
    "source",
    [
        "from compiler.solve.model import host_limits",
        "from compiler.catalog import enumerate_layouts",
        "import compiler.resolve.host",
        "from compiler import catalog",
        "from compiler.resolve import Guarantee",
        "import importlib\nimportlib.import_module('compiler.solve')",
        "__import__('compiler.catalog')",
    ],
)
def test_a_forbidden_import_is_seen(source: str) -> None:
    assert refused(imports(source, "tests.sub")), source


def test_the_input_is_allowed() -> None:
    source = "from compiler.model.build import Policies\nfrom compiler.load import load_policies"
    assert not refused(imports(source))
