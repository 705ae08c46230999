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

Every key of a compile with the cache takes this walk over its whole cluster (about 300
objects and 3,000 values for each of fleet L's clusters), so each type's writer is chosen
once (`_writer`) and plain values are written where they are met, without a call.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
from collections.abc import Callable
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
        kind = type(value)
        if kind in _PLAIN:
            self.tokens.append(repr(value))
        else:
            (_WRITERS.get(kind) or _writer(kind))(self, value)

    def plain(self, value: Any) -> None:
        """A value of a subclass of a plain type (an IntEnum's or StrEnum's member too)."""
        self.tokens.append(repr(value))

    def sequence(self, value: tuple[Any, ...] | list[Any]) -> None:
        tokens = self.tokens
        tokens.append("(")
        for item in value:
            if type(item) in _PLAIN:
                tokens.append(repr(item))
            else:
                self.add(item)
        tokens.append(")")

    def mapping(self, value: dict[Any, Any]) -> None:
        tokens = self.tokens
        tokens.append("{")
        for key, item in value.items():
            self.add(key)
            if type(item) in _PLAIN:
                tokens.append(repr(item))
            else:
                self.add(item)
        tokens.append("}")

    def unordered(self, value: set[Any] | frozenset[Any]) -> None:
        self.tokens.append("s" + ",".join(sorted(fingerprint(item) for item in value)))

    def member(self, value: enum.Enum) -> None:
        self.tokens.append(f"e:{type(value).__qualname__}.{value.value!r}")

    def position(self, value: Span) -> None:
        self.tokens.append("p")

    def model(self, value: BaseModel) -> None:
        if self._met_before(value):
            return
        private = value.__pydantic_private__ or {}
        source = private.get("_source")
        origin = source.origin if isinstance(source, SourceDocument) else ""
        self.tokens += (f"m:{type(value).__qualname__}", value.model_dump_json(), repr(origin))

    def document(self, value: SourceDocument) -> None:
        if self._met_before(value):
            return
        self.tokens.append(f"d:{value.origin!r}#{value.index}")
        self.add(value.data)

    def record(self, value: Any) -> None:
        """A dataclass instance."""
        if self._met_before(value):
            return
        tokens = self.tokens
        kind: type = type(value)
        tokens.append(f"c:{kind.__qualname__}")
        for name in _field_names(kind):
            item = getattr(value, name)
            if type(item) in _PLAIN:
                tokens.append(repr(item))
            else:
                self.add(item)
        tokens.append(")")

    def unknown(self, value: Any) -> None:
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
"""Exact types written as their repr."""

_Writer = Callable[[_Encoder, Any], None]
_WRITERS: dict[type, _Writer] = {}
"""Each type met so far, with its writer."""


def _writer(kind: type) -> _Writer:
    """The writer of `kind`'s values, by the first of the module docstring's rules it falls
    under (a subclass of a plain type, an enum's members among them, by the plain rule)."""
    writer: _Writer
    if issubclass(kind, bool | int | float | str):
        writer = _Encoder.plain
    elif issubclass(kind, tuple | list):
        writer = _Encoder.sequence
    elif issubclass(kind, dict):
        writer = _Encoder.mapping
    elif issubclass(kind, frozenset | set):
        writer = _Encoder.unordered
    elif issubclass(kind, enum.Enum):
        writer = _Encoder.member
    elif issubclass(kind, Span):
        writer = _Encoder.position
    elif issubclass(kind, BaseModel):
        writer = _Encoder.model
    elif issubclass(kind, SourceDocument):
        writer = _Encoder.document
    elif dataclasses.is_dataclass(kind) and not issubclass(kind, type):
        writer = _Encoder.record
    else:
        writer = _Encoder.unknown
    _WRITERS[kind] = writer
    return writer


@functools.cache
def _field_names(kind: type) -> tuple[str, ...]:
    """A dataclass's field names (looked up once per class: the IR has thousands of objects)."""
    return tuple(field.name for field in dataclasses.fields(kind))
