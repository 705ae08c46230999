"""No module of compiler/ imports back into a module that imports it, directly or through
others, at the top or inside a function (issue 19: load/loader.py and load/prefetch.py once
imported each other): data flows one way, and so do imports."""

from __future__ import annotations

import ast
from pathlib import Path

COMPILER = Path(__file__).resolve().parent.parent / "compiler"


def module_files() -> dict[str, Path]:
    """Every module of the compiler package by its dotted name (a package by its own)."""
    found = {}
    for path in COMPILER.rglob("*.py"):
        parts = list(path.relative_to(COMPILER.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imported_modules(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The compiler modules that module `name` imports: `from package import submodule`
    imports the submodule, not what the package's __init__ defines."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            for alias in node.names:  # a submodule, else a name the module `base` defines
                submodule = f"{base}.{alias.name}"
                found.add(submodule if submodule in modules else base)
    return {module for module in found if module in modules and module != name}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of `graph` (its modules in import order, the first repeated at the
    end), or None."""
    done: set[str] = set()
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        if module in path:
            return [*path[path.index(module) :], module]
        if module in done:
            return None
        path.append(module)
        for imported in sorted(graph[module]):
            cycle = visit(imported)
            if cycle:
                return cycle
        path.pop()
        done.add(module)
        return None

    for module in sorted(graph):
        cycle = visit(module)
        if cycle:
            return cycle
    return None


def test_the_compiler_has_no_import_cycle() -> None:
    modules = module_files()
    graph = {name: imported_modules(name, path, modules) for name, path in modules.items()}
    assert len(graph) > 50 and graph["compiler.pipeline"]
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_a_cycle_through_a_function_level_import_is_found(tmp_path: Path) -> None:
    """The shape the loader and its prefetcher once had: one imports the other at the top,
    the other imports it back inside a function."""
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
    loader = tmp_path / "loader.py"
    loader.write_text("def late():\n    from compiler.load import prefetch\n")
    modules = {"compiler.load": loader, "compiler.load.prefetch": loader}
    assert imported_modules("compiler.load.loader", loader, modules) == {"compiler.load.prefetch"}
