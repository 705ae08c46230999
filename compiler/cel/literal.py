"""Render data as CEL literals laid out for review: one map entry per line, keys sorted."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

Literal = str | Sequence["Literal"] | Mapping[str, "Literal"]


def cel_literal(value: Literal, indent: int = 0) -> str:
    """The CEL source of a string, list or map; maps with entries span one line per entry.

    Strings must be printable ASCII (names, label values, taint keys): they are written as
    JSON strings, whose escapes CEL reads the same way.
    """
    if isinstance(value, str):
        if not all(0x20 <= ord(c) <= 0x7E for c in value):
            raise ValueError(f"{value!r} is not printable ASCII")
        return json.dumps(value)
    if isinstance(value, Mapping):
        if not value:
            return "{}"
        pad = " " * (indent + 2)
        entries = [
            f"{pad}{cel_literal(k)}: {cel_literal(v, indent + 2)}" for k, v in sorted(value.items())
        ]
        return "{\n" + ",\n".join(entries) + "\n" + " " * indent + "}"
    return "[" + ", ".join(_inline(v) for v in value) + "]"


def _inline(value: Literal) -> str:
    if isinstance(value, Mapping):
        entries = sorted(value.items())
        return "{" + ", ".join(f"{cel_literal(k)}: {_inline(v)}" for k, v in entries) + "}"
    return cel_literal(value)
