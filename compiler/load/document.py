"""A loaded YAML document: plain data plus the source span of every node in it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from compiler.diagnostics import Span

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class SourceDocument:
    """One YAML document of one policy file.

    `data` is made of dict, list, str, int, float, bool and None only; `positions` maps the
    path of every node (keys and indices from the root) to its 1-based (line, column).
    """

    file: str
    """The path to show in diagnostics (relative to the working directory when possible)."""
    origin: str
    """The stable path used in provenance annotations: `<policies dir name>/<relative path>`."""
    index: int
    data: Any
    positions: Mapping[Path, tuple[int, int]] = field(repr=False)

    @property
    def relative_path(self) -> str:
        """The file's path below the policy directory (`origin` without the directory)."""
        return self.origin.split("/", 1)[1]

    def span(self, path: Path = ()) -> Span:
        """The span of the node at `path`, or of its nearest ancestor that has one."""
        for end in range(len(path), -1, -1):
            found = self.positions.get(tuple(path[:end]))
            if found is not None:
                return Span(self.file, *found)
        return Span(self.file, 1, 1)


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
