"""A loaded YAML document: plain data plus the source span of every node in it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from compiler.diagnostics import Span

Path = tuple[str | int, ...]

KEY = "<key>"
"""The last step of a path that means a mapping entry's key rather than its value
(`("spec", "teams", "<key>")` is where the key `teams` is written)."""

_BITS = 32
"""Bits per packed line or column: more than any file gpufleet reads can have (a cluster dump
of 64 MiB has fewer than 2**26 lines)."""
_MASK = (1 << _BITS) - 1


def pack_position(line: int, column: int, key: tuple[int, int] | None = None) -> int:
    """A node's 1-based (line, column), and for a mapping entry's value its key's, as one int.

    Hundreds of thousands of nodes are positioned in a large fleet: an int each instead of a
    tuple for the value and another entry, path and tuple for its key is a third of what the
    loaded documents take (and of what a worker pickles back).
    """
    key_line, key_column = key or (0, 0)
    return line | column << _BITS | key_line << 2 * _BITS | key_column << 3 * _BITS


def unpack_position(packed: int, of_key: bool = False) -> tuple[int, int] | None:
    """The (line, column) that pack_position packed: the node's, or `of_key` its key's
    (None when it was packed without one)."""
    if of_key:
        packed >>= 2 * _BITS
    line, column = packed & _MASK, packed >> _BITS & _MASK
    return (line, column) if line else None


@dataclass(frozen=True)
class SourceDocument:
    """One YAML document of one policy file.

    `data` is made of dict, list, str, int, float, bool and None only; `positions` maps the
    path of every node (keys and indices from the root) to its 1-based (line, column), and
    a mapping entry's key's, packed (pack_position).
    """

    file: str
    """The path to show in diagnostics (relative to the working directory when possible)."""
    origin: str
    """The stable path used in provenance annotations: `<policies dir name>/<relative path>`."""
    index: int
    data: Any
    positions: Mapping[Path, int] = field(repr=False)

    @property
    def relative_path(self) -> str:
        """The file's path below the policy directory (`origin` without the directory)."""
        return self.origin.split("/", 1)[1]

    def span(self, path: Path = ()) -> Span:
        """The span of the node at `path`, or of its nearest ancestor that has one."""
        for end in range(len(path), -1, -1):
            found = self.position(tuple(path[:end]))
            if found is not None:
                return Span(self.file, *found)
        return Span(self.file, 1, 1)

    def position(self, path: Path) -> tuple[int, int] | None:
        """Where the node at `path` starts (its key, for a path ending in KEY), if known."""
        of_key = bool(path) and path[-1] == KEY
        packed = self.positions.get(path[:-1] if of_key else path)
        return None if packed is None else unpack_position(packed, of_key)


def has_child(node: Any, step: str | int) -> bool:
    """Whether `node[step]` exists in loaded data (a mapping key or a list index)."""
    if isinstance(node, dict):
        return isinstance(step, str) and step in node
    return isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node)


@dataclass(frozen=True)
class ComposedDocument(SourceDocument):
    """A document put together from parts of others (a team's grant and its own file):
    every diagnostic about a part points where that part was written.

    `parts` maps a path of the composed data to the document and path it was taken from;
    the longest matching prefix wins, and paths no part covers resolve in this document.
    """

    parts: Mapping[Path, tuple[SourceDocument, Path]] = field(default_factory=dict, repr=False)

    def span(self, path: Path = ()) -> Span:
        """The span of the node at `path`, in the document it was taken from."""
        for end in range(len(path), -1, -1):
            part = self.parts.get(tuple(path[:end]))
            if part is not None:
                document, taken_from = part
                return document.span((*taken_from, *path[end:]))
        return super().span(path)
