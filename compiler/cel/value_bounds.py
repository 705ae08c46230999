"""Shapes: upper bounds on CEL values (how long a string, how many items a list can have).

The cost bound in `compiler.cel.cost` needs to know how large the data an expression walks
can be. A Shape says it: a string of at most N characters, a list of at most N items of
some shape, a map, or a record with named fields. A record lists only the fields it bounds;
reaching any other field is an error, so an expression can never walk data of unknown size.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

Kind = Literal["scalar", "string", "list", "map", "record", "never"]


class ShapeError(ValueError):
    """An expression reaches data without a known bound, or mixes incompatible shapes."""


@dataclass(frozen=True)
class Shape:
    """An upper bound on a value; `size` is characters, items or entries (None: unbounded)."""

    kind: Kind
    size: int | None = None
    item: Shape | None = None
    """List element or map value; None for a list that is always empty."""
    key: Shape | None = None
    fields: tuple[tuple[str, Shape], ...] = ()
    _hash: int = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Shapes are cache keys of the cost bound: hash each once, not the whole tree per lookup.
        parts = (self.kind, self.size, self.item, self.key, self.fields)
        object.__setattr__(self, "_hash", hash(parts))

    def __hash__(self) -> int:
        return self._hash

    def field(self, name: str) -> Shape:
        """The shape of `self.name` (a record field, or a map value selected by name)."""
        if self.kind == "never":
            return self
        if self.kind == "map":
            return self.item or NEVER
        if self.kind == "record":
            for field_name, shape in self.fields:
                if field_name == name:
                    return shape
        raise ShapeError(f"no size bound is declared for field {name!r}")

    @property
    def length(self) -> int:
        """The size that CEL's cost functions see: 1 for scalars and records."""
        if self.kind == "never":
            return 0
        if self.kind in ("scalar", "record"):
            return 1
        if self.size is None:
            raise ShapeError(f"a {self.kind} without a size bound")
        return self.size


SCALAR = Shape("scalar")
NEVER = Shape("never")
"""What an index into an empty literal yields: no value (it is an error at runtime)."""


@lru_cache(maxsize=1024)
def string(max_length: int) -> Shape:
    """A string of at most `max_length` characters (one object per length: literals of
    thousands of names make few distinct ones, and merging a shape with itself is free)."""
    return Shape("string", max_length)


def list_of(max_items: int, item: Shape) -> Shape:
    """A list of at most `max_items` items of shape `item`."""
    return Shape("list", max_items, item)


def map_of(key: Shape, value: Shape, max_entries: int | None = None) -> Shape:
    """A map; without `max_entries` it may be looked up but not iterated."""
    return Shape("map", max_entries, value, key)


def record(**fields: Shape) -> Shape:
    """An object with the named fields (and no other field a bound is known for)."""
    return Shape("record", fields=tuple(sorted(fields.items())))


def merge(a: Shape | None, b: Shape | None) -> Shape | None:
    """The least shape that bounds both `a` and `b` (None is the empty list's element)."""
    if a is None or a.kind == "never":
        return b
    if b is None or b.kind == "never":
        return a
    if a is b or (a._hash == b._hash and a == b):
        return a
    if a.kind != b.kind:
        raise ShapeError(f"cannot bound a value that is a {a.kind} or a {b.kind}")
    if a.kind == "record":
        names = sorted({n for n, _ in a.fields} | {n for n, _ in b.fields})
        merged = {}
        for name in names:
            left = dict(a.fields).get(name)
            right = dict(b.fields).get(name)
            shape = merge(left, right)
            assert shape is not None
            merged[name] = shape
        return record(**merged)
    size = None if a.size is None or b.size is None else max(a.size, b.size)
    return Shape(a.kind, size, merge(a.item, b.item), merge(a.key, b.key))
