"""The key of a compile: a hash of everything that decides the tree `compile` writes.

What goes in, and why each part:

- the policy files' paths and bytes (the loader's own rule for which files those are), and
  any policy-named entry that is no regular file (the loader refuses those: GF109);
- the compiler: its version, every file of the `compiler` package and of the templates (an
  edited checkout never matches a record of the code before the edit), the Python version and
  every installed distribution's name and version (ortools, Jinja2, ... shape the output too);
- the options that can change the verdict or the tree: the solver's time limits (a shorter
  one can time out), --validate, and where the policies, out/ and the working directory are
  (paths in diagnostics and in CODEOWNERS' checks are relative to them).

The previous plans steer the solver, but they are in out/, whose digest a record holds
(compiler.cache.store): a record is used only when out/ is byte for byte what it was.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import compiler
from compiler.emit.render import templates_dir
from compiler.load.loader import POLICY_SUFFIXES

KEY_FORMAT = "gpufleet-compile-key/1"
"""Changes whenever what a key covers changes, so that old records are never matched."""


@dataclass(frozen=True)
class CompileOptions:
    """The command-line options a compile's verdict and tree depend on."""

    solver_time_limit: float
    explain_time_limit: float
    validate: bool


def compile_key(
    policies: Path,
    out: Path,
    options: CompileOptions,
    code_roots: Iterable[Path] | None = None,
) -> str:
    """The hex key of compiling `policies` over `out` with `options` by this compiler.

    `code_roots` are the directories whose files are the compiler's code and templates (by
    default the installed `compiler` package and its templates; tests pass their own).
    """
    digest = hashlib.sha256()

    def add(*parts: str | bytes) -> None:
        for part in parts:
            data = part.encode("utf-8", "surrogateescape") if isinstance(part, str) else part
            digest.update(len(data).to_bytes(8, "little"))
            digest.update(data)

    add(KEY_FORMAT, compiler.__version__, sys.version, repr(options))
    add(str(policies.resolve()), str(out.resolve()), str(Path.cwd().resolve()))
    for distribution in _distributions():
        add("distribution", distribution)
    roots = (Path(compiler.__file__).parent, templates_dir()) if code_roots is None else code_roots
    for root in roots:
        add("code", str(root))
        for path in _files_below(root, lambda p: "__pycache__" not in p.parts):
            add(path.relative_to(root).as_posix(), path.read_bytes())
    add("policies")
    for path in _files_below(policies, lambda p: p.suffix in POLICY_SUFFIXES, keep_other=True):
        relative = path.relative_to(policies).as_posix()
        add(relative, path.read_bytes() if path.is_file() else b"\0not a regular file")
    return digest.hexdigest()


def _distributions() -> list[str]:
    """`name==version` of every installed distribution, sorted."""
    found = {
        f"{dist.metadata['Name']}=={dist.version}" for dist in importlib.metadata.distributions()
    }
    return sorted(found)


def _files_below(
    root: Path, wanted: Callable[[Path], bool], keep_other: bool = False
) -> list[Path]:
    """The files below `root` that `wanted(path)` accepts, sorted by relative path (links
    followed as the loader follows them); with `keep_other`, accepted entries that are
    neither a file nor a directory too (a dangling link, a FIFO)."""
    found = [
        path
        for path in root.rglob("*")
        if wanted(path) and (path.is_file() or (keep_other and not path.is_dir()))
    ]
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())
