"""The checked syntax tree of a CEL expression, read from cel-cpp's serialized CheckedExpr.

cel-expr-python exposes no syntax tree, but `Expression.serialize()` returns the checked
expression as a `google.protobuf.Any` holding a `cel.expr.CheckedExpr`. Its Python message
classes are not shipped, so this module decodes the protobuf wire format directly for the
few messages of `cel/expr/syntax.proto` it needs (field numbers below). Macros (`all`,
`exists`, `map`, `filter`, `has`) arrive expanded, exactly as the evaluator runs them.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from compiler.cel.environment import checked_syntax


@dataclass(frozen=True)
class Const:
    """A literal: None, bool, int, float, str or bytes."""

    value: Any
    offset: int = dataclasses.field(default=-1, compare=False, kw_only=True)


@dataclass(frozen=True)
class Ident:
    """A variable reference."""

    name: str
    offset: int = dataclasses.field(default=-1, compare=False, kw_only=True)


@dataclass(frozen=True)
class Select:
    """`operand.field`, or `has(operand.field)` when `test_only`."""

    operand: Node
    field: str
    test_only: bool
    offset: int = dataclasses.field(default=-1, compare=False, kw_only=True)


@dataclass(frozen=True)
class Call:
    """A function or operator call (`_&&_`, `@in`, `_[_]`, `size`, ...)."""

    function: str
    target: Node | None
    args: tuple[Node, ...]
    offset: int = dataclasses.field(default=-1, compare=False, kw_only=True)


@dataclass(frozen=True)
class ListLit:
    """A list literal."""

    elements: tuple[Node, ...]
    offset: int = dataclasses.field(default=-1, compare=False, kw_only=True)


@dataclass(frozen=True)
class MapLit:
    """A map literal, as (key, value) pairs."""

    entries: tuple[tuple[Node, Node], ...]
    offset: int = dataclasses.field(default=-1, compare=False, kw_only=True)


@dataclass(frozen=True)
class Comprehension:
    """The expansion of a macro: a fold over `iter_range`."""

    iter_var: str
    iter_range: Node
    accu_var: str
    accu_init: Node
    loop_condition: Node
    loop_step: Node
    result: Node
    offset: int = dataclasses.field(default=-1, compare=False, kw_only=True)


Node = Const | Ident | Select | Call | ListLit | MapLit | Comprehension
"""Every node carries `offset`: where cel-cpp placed it in the source, in code points (-1 when
unknown): a call at its operator or name, a field selection at its dot, an index at its `[`.
Offsets take no part in equality, so equal subtrees stay equal (and share cached costs)."""


@cache
def parse_checked(source: str, variables: tuple[str, ...]) -> Node:
    """The checked syntax tree of `source` with the given (dynamically typed) variables."""
    checked = _fields(_one(_fields(checked_syntax(source, variables)), 2))
    positions: dict[int, int] = {}
    for entry in _fields(_one(checked, 5)).get(4, []):
        pair = _fields(entry)
        positions[_one(pair, 1, 0)] = _one(pair, 2, 0)
    return _Decoder(positions).expr(checked[4][0])


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def _records(data: bytes) -> Iterator[tuple[int, Any]]:
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        value: Any
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = data[pos : pos + 8], pos + 8
        elif wire == 2:
            length, pos = _varint(data, pos)
            value, pos = data[pos : pos + length], pos + length
        elif wire == 5:
            value, pos = data[pos : pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        yield number, value


def _fields(data: bytes) -> dict[int, list[Any]]:
    fields: dict[int, list[Any]] = {}
    for number, value in _records(data):
        fields.setdefault(number, []).append(value)
    return fields


def _one(fields: dict[int, list[Any]], number: int, default: Any = b"") -> Any:
    return fields.get(number, [default])[-1]


def _text(fields: dict[int, list[Any]], number: int) -> str:
    return bytes(_one(fields, number)).decode()


class _Decoder:
    """Decodes `cel.expr.Expr` messages, placing each node at its source position."""

    def __init__(self, positions: dict[int, int]) -> None:
        self.positions = positions

    def expr(self, data: bytes) -> Node:
        fields = _fields(data)
        at = self.positions.get(_one(fields, 2, 0), -1)
        expr = self.expr
        if 3 in fields:
            return Const(_constant(_fields(_one(fields, 3))), offset=at)
        if 4 in fields:
            return Ident(_text(_fields(_one(fields, 4)), 1), offset=at)
        if 5 in fields:
            select = _fields(_one(fields, 5))
            operand = expr(_one(select, 1))
            return Select(operand, _text(select, 2), bool(_one(select, 3, 0)), offset=at)
        if 6 in fields:
            call = _fields(_one(fields, 6))
            target = expr(_one(call, 1)) if 1 in call else None
            args = tuple(expr(a) for a in call.get(3, []))
            return Call(_text(call, 2), target, args, offset=at)
        if 7 in fields:
            return ListLit(tuple(expr(e) for e in _fields(_one(fields, 7)).get(1, [])), offset=at)
        if 8 in fields:
            struct_ = _fields(_one(fields, 8))
            if 1 in struct_:
                raise ValueError("message literals are not supported")
            entries = [_fields(e) for e in struct_.get(2, [])]
            pairs = tuple((expr(_one(e, 3)), expr(_one(e, 4))) for e in entries)
            return MapLit(pairs, offset=at)
        if 9 in fields:
            c = _fields(_one(fields, 9))
            return Comprehension(
                _text(c, 1),
                expr(_one(c, 2)),
                _text(c, 3),
                expr(_one(c, 4)),
                expr(_one(c, 5)),
                expr(_one(c, 6)),
                expr(_one(c, 7)),
                offset=at,
            )
        raise ValueError("empty expression node")


def _constant(fields: dict[int, list[Any]]) -> Any:
    if 1 in fields:
        return None
    if 2 in fields:
        return bool(_one(fields, 2))
    if 3 in fields:
        value = _one(fields, 3)
        return value - (1 << 64) if value >= 1 << 63 else value
    if 4 in fields:
        return _one(fields, 4)
    if 5 in fields:
        return struct.unpack("<d", _one(fields, 5))[0]
    if 6 in fields:
        return bytes(_one(fields, 6)).decode()
    if 7 in fields:
        return bytes(_one(fields, 7))
    raise ValueError("unsupported constant kind")


def children(node: Node) -> tuple[Node, ...]:
    """The nodes directly below `node`, in source order where it has one."""
    if isinstance(node, Select):
        return (node.operand,)
    if isinstance(node, Call):
        return (*([node.target] if node.target is not None else []), *node.args)
    if isinstance(node, ListLit):
        return node.elements
    if isinstance(node, MapLit):
        return tuple(x for entry in node.entries for x in entry)
    if isinstance(node, Comprehension):
        return (
            node.iter_range,
            node.accu_init,
            node.loop_condition,
            node.loop_step,
            node.result,
        )
    return ()


def walk(node: Node) -> Iterator[Node]:
    """`node` and every node below it."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children(current)))


def selected_fields(node: Node, root: str) -> set[str]:
    """The fields selected directly on variable `root` (e.g. `variables.x` -> {"x"})."""
    return {
        current.field
        for current in walk(node)
        if isinstance(current, Select)
        and isinstance(current.operand, Ident)
        and current.operand.name == root
    }
