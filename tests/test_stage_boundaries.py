"""The stages after resolve see the rest of the compiler only through the IR (issue 19).

solve, emit and report (and compiler/ir itself) may import, besides the standard library and
third-party packages, only their own package and the shared contract: `compiler.ir` (what
resolve produces and solve completes), `compiler.catalog`, `compiler.cel`, `compiler.versions`
and `compiler.diagnostics`, plus the leaf utilities in SHARED_LEAVES and, for a module in
UPSTREAM, the one upstream package it names with its reason. This test reads every module's
AST (imports inside functions and `TYPE_CHECKING` blocks count too) and fails on any other
import of a compiler module.
"""

from __future__ import annotations

import ast
from pathlib import Path

COMPILER = Path(__file__).resolve().parent.parent / "compiler"

CHECKED_STAGES = ("solve", "emit", "report", "ir")

CONTRACT = frozenset({"ir", "catalog", "cel", "versions", "diagnostics"})

# Leaf modules that are no stage: they import nothing from the compiler but diagnostics.
SHARED_LEAVES = {
    "names": "Kubernetes name rules (DNS-1123 limits, shortening): pure string functions",
    "quantity": "Kubernetes resource quantities as exact numbers: parsing and formatting",
    "parallel": "runs per-cluster work on every core; knows no policy or plan",
    "lifetime": "ends the processes gpufleet forks when it ends: process calls only",
    "kueue_versions": "the table of Kueue releases, a sibling of compiler.versions",
    "limits": "the solver's default time limits, shared with the command line",
    "template_files": "where the output templates are: a path",
}

# Modules that may import one package upstream of the contract, and why.
UPSTREAM: dict[str, tuple[str, str]] = {
    "compiler.ir.policy": (
        "model",
        "the IR carries the policy model's validated objects (resolve builds it from them; "
        "model never imports ir): this one module names the types, the rest import them from it",
    ),
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(COMPILER.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: relative import; write the absolute module"
            if node.module is not None:
                found.add(node.module)
    return found


def _crossings(stage: str) -> set[tuple[str, str]]:
    allowed = CONTRACT | set(SHARED_LEAVES) | {stage}
    crossings: set[tuple[str, str]] = set()
    for path in sorted((COMPILER / stage).rglob("*.py")):
        importer = _module_name(path)
        upstream = {UPSTREAM[importer][0]} if importer in UPSTREAM else set()
        for imported in _imported_modules(path):
            parts = imported.split(".")
            if parts[0] == "compiler" and (len(parts) == 1 or parts[1] not in allowed | upstream):
                crossings.add((importer, imported))
    return crossings


def _all_crossings() -> set[tuple[str, str]]:
    return set().union(
        *(_crossings(stage) for stage in CHECKED_STAGES if (COMPILER / stage).is_dir())
    )


def test_stages_import_only_the_contract() -> None:
    crossings = sorted(_all_crossings())
    assert not crossings, (
        f"imports that cross a stage boundary (import from compiler.ir): {crossings}"
    )


def test_shared_leaves_import_no_stage() -> None:
    for leaf in SHARED_LEAVES:
        imported = _imported_modules(COMPILER / f"{leaf}.py")
        compiler_imports = {name for name in imported if name.split(".")[0] == "compiler"}
        leaves = {f"compiler.{other}" for other in SHARED_LEAVES}
        assert compiler_imports <= {"compiler.diagnostics"} | leaves, (leaf, compiler_imports)


def test_what_ir_names_upstream_never_imports_a_stage() -> None:
    """What UPSTREAM allows stays upstream: it imports no stage after it (no cycle back)."""
    stages = {"resolve", *CHECKED_STAGES}
    for package, _reason in UPSTREAM.values():
        for path in sorted((COMPILER / package).rglob("*.py")):
            reached = {
                parts[1]
                for name in _imported_modules(path)
                if (parts := name.split("."))[0] == "compiler" and len(parts) > 1
            }
            assert not reached & stages, (path, sorted(reached & stages))


def test_the_walk_sees_a_crossing(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "def f():\n"
        "    from compiler.resolve import ResolvedCluster\n"
        "    import compiler.model.fleet\n"
    )
    assert _imported_modules(module) == {"compiler.resolve", "compiler.model.fleet"}
