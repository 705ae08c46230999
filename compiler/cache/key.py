"""The key of a compile: a hash of everything that decides the tree `compile` writes.

What goes in, and why each part:

- the policy files' paths and the digests of their bytes as the compile reads them
  (compiler.policy_files' PolicySnapshot: the loader's own rule for which files those are,
  and as many bytes as the loader reads; the policy directory's index gives the digest of a
  file that did not change without reading it), and any policy-named entry that is no
  regular file (refused: GF109);
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

import contextlib
import hashlib
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import compiler
from compiler.file_bytes import digest_bytes
from compiler.policy_files import PolicySnapshot
from compiler.template_files import templates_dir

KEY_FORMAT = "gpufleet-compile-key/3"
"""Changes whenever what a key covers changes, so that old records are never matched."""


@dataclass(frozen=True)
class CompileOptions:
    """The command-line options a compile's verdict and tree depend on."""

    solver_time_limit: float
    explain_time_limit: float
    validate: bool


def compile_key(
    policies: Path, files: PolicySnapshot, out: Path, options: CompileOptions, code: str
) -> str:
    """The hex key of compiling `policies`, whose files are `files` (before the loader takes
    their bytes), over `out` with `options` by the compiler whose code_digest is `code`."""
    digest = hashlib.sha256()

    def add(*parts: str | bytes) -> None:
        for part in parts:
            data = part.encode("utf-8", "surrogateescape") if isinstance(part, str) else part
            digest.update(len(data).to_bytes(8, "little"))
            digest.update(data)

    add(KEY_FORMAT, repr(options), code)
    add(str(policies.resolve()), str(out.resolve()), str(Path.cwd().resolve()))
    add("policies")
    for entry in files.files:  # in order of their relative paths (scan_policy_files)
        read = files.contents[entry.relative]
        link = "" if read.real is None else f"link to {read.real}"
        add(entry.relative, digest_bytes(read.digest), link)
    for entry in files.others:
        add(entry.relative, b"\0not a regular file", "")
    return digest.hexdigest()


def code_digest(code_roots: Iterable[Path] | None = None) -> str:
    """A hash of the compiler that runs: its version, the Python version, the installed
    distributions and every file of the `compiler` package and of the templates (an edited
    checkout never matches what the code before the edit wrote).

    `code_roots` are the directories whose files are the compiler's code and templates (by
    default the installed `compiler` package and its templates; tests pass their own).
    """
    digest = hashlib.sha256()
    digest.update(f"{compiler.__version__}\0{sys.version}\0".encode())
    for distribution in _distributions():
        digest.update(f"distribution {distribution}\0".encode())
    roots = (Path(compiler.__file__).parent, templates_dir()) if code_roots is None else code_roots
    for root in roots:
        digest.update(f"code {root}\0".encode())
        for path in _files_below(root, lambda p: "__pycache__" not in p.parts):
            data = path.read_bytes()
            name = path.relative_to(root).as_posix()
            digest.update(f"{name}\0{len(data)}\0".encode("utf-8", "surrogateescape") + data)
    return digest.hexdigest()


def _distributions() -> list[str]:
    """The metadata directories (`<name>-<version>.dist-info`) of every installed
    distribution on the import path, sorted: their names say which versions are installed,
    and listing them is much cheaper than reading each one's metadata."""
    found: set[str] = set()
    for entry in sys.path:
        with contextlib.suppress(OSError):
            found.update(os.listdir(entry or "."))
    return sorted(name for name in found if name.endswith((".dist-info", ".egg-info")))


def _files_below(root: Path, wanted: Callable[[Path], bool]) -> list[Path]:
    """The files below `root` that `wanted(path)` accepts, sorted by relative path."""
    found = [path for path in root.rglob("*") if wanted(path) and path.is_file()]
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())
