"""A digest of resolved values that is the same in every run that resolves the same policy.

The key of one cluster's cached plan and objects (compiler.cache.clusters) is this digest of
what solve and emit read: the cluster's resolved policy, the fleet-wide objects emit sees and
the previous plan. It is taken from the values themselves, not from the files they came
from, so an edit to one team's file changes only the keys of the clusters the team is in.

What counts:

- plain data, tuples, lists, dicts (in their order: emit writes in that order) and sets (in
  sorted order of their members' digests: their iteration order changes from run to run);
- a dataclass by its class and every field; an enum by its class and value;
- a policy object (pydantic model) by its class, its validated values (`model_dump_json`)
  and the origin of the document it came from, which emit writes in provenance annotations;
- a source document by its origin, index and data.

Positions (line and column, `Span`) do not count: they only place diagnostics, and a cluster
whose solve or emit reports a problem is never cached. Any other type is a TypeError, so that
a new kind of value in the IR cannot silently fall out of the key.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
from typing import Any

from pydantic import BaseModel

from compiler.diagnostics import Span
from compiler.load.document import SourceDocument


def fingerprint(*values: Any) -> str:
    """The hex digest of `values` (see the module's docstring for what counts)."""
    encoder = _Encoder()
    for value in values:
        encoder.add(value)
    # every token is a repr, a JSON text or a marker: none holds the separator unescaped
    text = "\x1f".join(encoder.tokens)
    return hashlib.blake2b(text.encode("utf-8", "surrogateescape"), digest_size=20).hexdigest()


class _Encoder:
    """Writes one value graph as tokens; an object met again is written as a back-reference
    (the IR shares a team between all of its guarantees)."""

    def __init__(self) -> None:
        self.tokens: list[str] = []
        self.seen: dict[int, int] = {}
        self.kept: list[Any] = []  # keeps every seen object alive, so no id() is reused

    def add(self, value: Any) -> None:
        tokens = self.tokens
        kind = type(value)  # most values are of these exact types: no isinstance for them
        if kind in _PLAIN or value is None or isinstance(value, bool | int | float | str):
            tokens.append(repr(value))
        elif kind is tuple or kind is list or isinstance(value, tuple | list):
            tokens.append("(")
            for item in value:
                self.add(item)
            tokens.append(")")
        elif isinstance(value, dict):
            tokens.append("{")
            for key, item in value.items():
                self.add(key)
                self.add(item)
            tokens.append("}")
        elif isinstance(value, frozenset | set):
            tokens.append("s" + ",".join(sorted(fingerprint(item) for item in value)))
        elif isinstance(value, enum.Enum):
            tokens.append(f"e:{type(value).__qualname__}.{value.value!r}")
        elif isinstance(value, Span):
            tokens.append("p")
        elif self._met_before(value):
            return
        elif isinstance(value, BaseModel):
            private = value.__pydantic_private__ or {}
            source = private.get("_source")
            origin = source.origin if isinstance(source, SourceDocument) else ""
            tokens += (f"m:{type(value).__qualname__}", value.model_dump_json(), repr(origin))
        elif isinstance(value, SourceDocument):
            tokens.append(f"d:{value.origin!r}#{value.index}")
            self.add(value.data)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            tokens.append(f"c:{type(value).__qualname__}")
            for name in _field_names(type(value)):
                self.add(getattr(value, name))
            tokens.append(")")
        else:
            raise TypeError(f"no fingerprint for a {type(value).__qualname__}")

    def _met_before(self, value: Any) -> bool:
        """Whether `value` was added before (then a back-reference is written)."""
        number = self.seen.get(id(value))
        if number is not None:
            self.tokens.append(f"@{number}")
            return True
        self.seen[id(value)] = len(self.kept)
        self.kept.append(value)
        return False


_PLAIN = frozenset({str, int, bool, float, type(None)})
"""Exact types written as their repr (their subclasses, enums among them, are checked too)."""


@functools.cache
def _field_names(kind: type) -> tuple[str, ...]:
    """A dataclass's field names (looked up once per class: the IR has thousands of objects)."""
    return tuple(field.name for field in dataclasses.fields(kind))
