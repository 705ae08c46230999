"""Render data as CEL literals laid out for review: one map entry per line, keys sorted."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from json.encoder import encode_basestring_ascii
from typing import TypeGuard

Literal = str | Sequence["Literal"] | Mapping[str, "Literal"]


class CelLiteral(str):
    """CEL source that is a constant, remembering the data it was written from, so that the
    cost bound can size it without parsing it back."""

    value: Literal

    def __new__(cls, source: str, value: Literal) -> CelLiteral:
        literal = super().__new__(cls, source)
        literal.value = value
        return literal

    def __reduce__(self) -> tuple[type[CelLiteral], tuple[str, Literal]]:
        return CelLiteral, (str(self), self.value)


def cel_literal(value: Literal) -> CelLiteral:
    """The CEL source of a string, list or map; maps with entries span one line per entry.

    Strings must be printable ASCII (names, label values, taint keys): they are written as
    JSON strings, whose escapes CEL reads the same way.
    """
    return CelLiteral(_source(value, 0), value)


def is_mapping(value: Literal) -> TypeGuard[Mapping[str, Literal]]:
    """Whether a literal's value is a mapping: by its type first, as nearly every value is a
    str, dict or list and an isinstance check against an ABC (Mapping) is slow."""
    kind = type(value)
    return kind is dict or (
        kind is not list and not isinstance(value, str) and isinstance(value, Mapping)
    )


def _source(value: Literal, indent: int) -> str:
    if isinstance(value, str):
        return _string(value)
    if is_mapping(value):
        if not value:
            return "{}"
        pad = " " * (indent + 2)
        entries = [
            f"{pad}{_source(k, 0)}: {_source(v, indent + 2)}" for k, v in sorted(value.items())
        ]
        return "{\n" + ",\n".join(entries) + "\n" + " " * indent + "}"
    return "[" + ", ".join(_inline(v) for v in value) + "]"


def _inline(value: Literal) -> str:
    if is_mapping(value):
        entries = sorted(value.items())
        return "{" + ", ".join(f"{_source(k, 0)}: {_inline(v)}" for k, v in entries) + "}"
    return _source(value, 0)


@lru_cache(maxsize=65536)
def _string(value: str) -> str:
    """A string's CEL source (remembered: the same names recur in every literal)."""
    if not (value.isascii() and value.isprintable()):
        raise ValueError(f"{value!r} is not printable ASCII")
    return encode_basestring_ascii(value)  # what json.dumps(value) returns, less its overhead
