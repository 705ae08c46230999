"""Check a DRA device selector with the types of what a device publishes.

Kubernetes declares every `device.capacity[<domain>].<name>` a Quantity
(k8s.io/dynamic-resource-allocation/cel/compile.go, `innerCapacityMapType`) and leaves
`device.attributes` dynamic, typed only when a selector runs: a string compared with a version
is then an error or simply false on the scheduler, never a message in the pull request. gpufleet
knows each attribute's type from the driver's table, so it checks them before that.

cel-cpp checks only declared variables, and a map has one value type. So each typed access
(`device.capacity["gpu.nvidia.com"].memory`, `device.attributes[...]["productName"]`) is
replaced, in a copy of the source, by a stand-in variable of its type written over the same
characters (its name, then spaces, line breaks kept): everything after it keeps its line and
column, and cel-cpp's own checker rejects `memory > "40Gi"` at the `>` as it rejects any other
misuse. Evaluation still runs the source as written.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from compiler.cel.ast import Call, Const, Ident, Node, Select, children, parse_checked
from compiler.cel.environment import (
    CelCompileError,
    CompiledExpression,
    check_typed,
    compile_expression,
)
from compiler.cel.type_hints import TypedAccess, type_hint

SELECTOR_VARIABLES = ("device",)
"""What a DeviceClass selector sees (a claim's selector too)."""
CAPACITY_TYPE = "quantity"
"""The type of every capacity value, whatever its domain and name."""
_STAND_IN = {t: f"_gf_{t[0]}" for t in ("quantity", "version", "string", "int", "bool")}
"""A variable per type, short enough to fit over `device`, where every access starts."""
_FIELD = re.compile(r"\.\s*([A-Za-z_][A-Za-z0-9_]*)")
_QUOTE = re.compile(r"[rR]?(\"\"\"|'''|\"|')")
_CLOSE = re.compile(r"\s*\]")


@dataclass(frozen=True)
class DeviceSchema:
    """The attributes a selector may rely on: (domain, name, value type) with value types
    `string`, `int`, `bool` or `version`. Capacity needs no entry: all of it is a quantity."""

    attributes: tuple[tuple[str, str, str], ...]
    _types: dict[tuple[str, str], str] = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        types = {(domain, name): value for domain, name, value in self.attributes}
        object.__setattr__(self, "_types", types)

    @classmethod
    def of(cls, types: Mapping[str, str]) -> DeviceSchema:
        """From qualified attribute names (`gpu.nvidia.com/productName`) and their types."""
        rows = []
        for qualified, value in types.items():
            domain, _, name = qualified.rpartition("/")
            rows.append((domain, name, value))
        return cls(tuple(sorted(rows)))

    def attribute(self, domain: str, name: str) -> str | None:
        """The type of `device.attributes[domain].name`, None when it is not known."""
        return self._types.get((domain, name))


@cache
def compile_selector(source: str, schema: DeviceSchema) -> CompiledExpression:
    """Compile a device selector, type-checking its capacity and attribute accesses as the
    types `schema` and Kubernetes give them (CelCompileError with a hint when they misuse
    them), so that a wrong comparison fails the pull request, not the scheduler."""
    compiled = compile_expression(source, SELECTOR_VARIABLES)
    accesses = typed_accesses(source, schema)
    if accesses:
        stand_ins = tuple(sorted({(_STAND_IN[a.type], a.type) for a in accesses}))
        try:
            check_typed(_with_stand_ins(source, accesses), (("device", "dyn"), *stand_ins))
        except CelCompileError as error:
            hint = type_hint(source, parse_checked(source, SELECTOR_VARIABLES), accesses, error)
            raise CelCompileError(error.message, error.line, error.column, hint) from None
    return compiled


def typed_accesses(source: str, schema: DeviceSchema) -> tuple[TypedAccess, ...]:
    """Every access of `source` to a capacity or to an attribute of known type, in order."""
    found: list[TypedAccess] = []
    stack: list[Node] = [parse_checked(source, SELECTOR_VARIABLES)]
    while stack:
        node = stack.pop()
        access = _typed_access(node, source, schema)
        if access is not None:
            if all(access.end <= a.start or a.end <= access.start for a in found):
                found.append(access)
            continue
        stack.extend(children(node))
    return tuple(sorted(found, key=lambda a: a.start))


def _typed_access(node: Node, source: str, schema: DeviceSchema) -> TypedAccess | None:
    """`node` as a typed access (`<map>.<name>` or `<map>["<name>"]`), if it is one."""
    if isinstance(node, Select) and not node.test_only:
        inner, name = node.operand, node.field
        field = _FIELD.match(source, node.offset) if node.offset >= 0 else None
        end = field.end() if field is not None and field[1] == name else None
    elif (
        isinstance(node, Call)
        and node.function == "_[_]"
        and node.target is None
        and isinstance(node.args[1], Const)
        and isinstance(node.args[1].value, str)
    ):
        inner, name = node.args[0], node.args[1].value
        end = _index_end(source, node.args[1].offset)
    else:
        return None
    domain_map = _domain_map(inner)
    if domain_map is None or end is None:
        return None
    kind, domain, start = domain_map
    value = CAPACITY_TYPE if kind == "capacity" else schema.attribute(domain, name)
    if value is None or not source.startswith(SELECTOR_VARIABLES[0], start):
        return None
    return TypedAccess(node, start, end, value, source[start:end])


def _domain_map(node: Node) -> tuple[str, str, int] | None:
    """(capacity or attributes, domain, where `device` starts) for `device.<kind>["<domain>"]`."""
    if not (isinstance(node, Call) and node.function == "_[_]" and node.target is None):
        return None
    container, key = node.args
    if (
        isinstance(container, Select)
        and not container.test_only
        and container.field in ("capacity", "attributes")
        and isinstance(container.operand, Ident)
        and container.operand.name == SELECTOR_VARIABLES[0]
        and container.operand.offset >= 0
        and isinstance(key, Const)
        and isinstance(key.value, str)
    ):
        return container.field, key.value, container.operand.offset
    return None


def _index_end(source: str, start: int) -> int | None:
    """Where `"<literal>" ]` starting at `start` ends (after the `]`), None if it does not."""
    quote = _QUOTE.match(source, start) if start >= 0 else None
    if quote is None:
        return None
    raw, delimiter, at = quote[0][0] in "rR", quote[1], quote.end()
    while at < len(source):
        if source.startswith(delimiter, at):
            close = _CLOSE.match(source, at + len(delimiter))
            return close.end() if close is not None else None
        at += 2 if source[at] == "\\" and not raw else 1
    return None


def _with_stand_ins(source: str, accesses: tuple[TypedAccess, ...]) -> str:
    """`source` with each access overwritten by its type's stand-in variable."""
    chars = list(source)
    for access in accesses:
        name = _STAND_IN[access.type]
        for at in range(access.start, access.end):
            if chars[at] not in "\r\n":
                chars[at] = " "
        chars[access.start : access.start + len(name)] = name
    return "".join(chars)
