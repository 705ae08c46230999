"""Typed access to one object of a loaded dump, each wrong or missing field a located GF802.

A `Cursor` is a path into a `SourceDocument`; its getters return the value in the Python type
the Kubernetes API gives the field, or raise `FieldError` carrying the diagnostic that points at
the field (or at the object that lacks it). The reader catches it per object, so one broken
object is reported and skipped, and every other object is still read and checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from compiler.diagnostics import Diagnostic
from compiler.load.document import KEY, Path, SourceDocument
from compiler.quantity import QuantityError, parse_quantity


class FieldError(Exception):
    """A field of a dump object that is missing or of the wrong type."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


_TYPE_NAMES = {
    str: "a string",
    int: "an integer",
    bool: "a boolean",
    dict: "a mapping",
    list: "a list",
}


def _shown(path: Path) -> str:
    """A path as a reader of the dump would write it: `spec.devices[3].name`."""
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
    return text or "the document"


@dataclass(frozen=True)
class Cursor:
    """A node of a dump document: `document.data` at `path`."""

    document: SourceDocument
    path: Path
    what: str
    """The object being read, for messages: `ResourceSlice node-1-gpu.nvidia.com-abcde`."""

    def value(self) -> Any:
        """The data at this cursor's path (the path was checked on the way down)."""
        node = self.document.data
        for step in self.path:
            node = node[step]
        return node

    def at(self, *steps: str | int) -> Cursor:
        """A cursor further down (not checked until read)."""
        return Cursor(self.document, (*self.path, *steps), self.what)

    def problem(self, message: str, *hints: str, key: bool = False) -> FieldError:
        """A GF802 at this cursor (at its key, for a problem with the name rather than the
        value)."""
        path = (*self.path, KEY) if key else self.path
        return FieldError(
            Diagnostic("GF802", f"{self.what}: {message}", self.document.span(path), hints)
        )

    def get(self, key: str, kind: type, *, required: bool = True, default: Any = None) -> Any:
        """The field `key` of this mapping, of type `kind` (int never accepts a bool); a
        missing optional field or an explicit null gives `default`."""
        node = self.value()
        if not isinstance(node, dict):
            raise self.problem(f"{_shown(self.path)} is not a mapping")
        if node.get(key) is None:
            if required:
                raise self.problem(
                    f"{_shown((*self.path, key))} is missing",
                    "dump the objects with `kubectl get ... -o yaml`, unedited",
                    key=bool(self.path) and isinstance(self.path[-1], str),
                )
            return default
        found = node[key]
        if kind is object:
            return found
        if not isinstance(found, kind) or (kind is int and isinstance(found, bool)):
            is_a = _TYPE_NAMES.get(type(found), type(found).__name__)
            raise self.at(key).problem(
                f"{_shown((*self.path, key))} is {is_a}, not {_TYPE_NAMES[kind]}"
            )
        return found

    def mapping(self, key: str, *, required: bool = False) -> dict[str, Any]:
        """The mapping `key` (empty when optional and absent)."""
        found: dict[str, Any] = self.get(key, dict, required=required, default={})
        return found

    def items(self, key: str, *, required: bool = False) -> list[Cursor]:
        """A cursor on every element of the list `key` (none when optional and absent)."""
        found = self.get(key, list, required=required, default=[])
        return [self.at(key, index) for index in range(len(found))]

    def text(self, key: str, *, required: bool = True) -> str | None:
        """The string `key`."""
        found: str | None = self.get(key, str, required=required)
        return found

    def whole(self, key: str, *, required: bool = True, default: int = 0) -> int:
        """The integer `key`."""
        found: int = self.get(key, int, required=required, default=default)
        return found

    def strings(self, key: str) -> dict[str, str]:
        """The mapping of strings `key` (labels): every value must be a string."""
        found = self.mapping(key)
        for name, value in found.items():
            if not isinstance(value, str):
                shown = _shown((*self.path, key, name))
                raise self.at(key, name).problem(f"{shown} is not a string")
        return found

    def quantity(self) -> Fraction:
        """This node as a Kubernetes quantity (a string, or a number as YAML wrote it)."""
        node = self.value()
        if isinstance(node, bool) or not isinstance(node, str | int):
            raise self.problem(f"{_shown(self.path)} is not a quantity")
        try:
            return parse_quantity(str(node))
        except QuantityError as error:
            raise self.problem(f"{_shown(self.path)}: {error}") from None

    def quantities(self, key: str) -> dict[str, Fraction]:
        """The mapping `key` of resource name -> quantity (a node's capacity)."""
        return {name: self.at(key, name).quantity() for name in self.mapping(key)}
