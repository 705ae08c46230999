"""The hint for a device selector that misuses a typed value: what the value is, and the
comparison written right where the mistake is a comparison with a literal.

`device.capacity["gpu.nvidia.com"].memory > "40Gi"` gets
`device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) > 0`: Kubernetes'
quantity and semver libraries compare with compareTo, isGreaterThan and isLessThan
(k8s.io/apiserver/pkg/cel/library/quantity.go, semverlib.go), never with `<` or `==`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from compiler.cel.ast import Call, Const, Node, walk
from compiler.cel.environment import CelCompileError

_DESCRIPTION = {
    "quantity": "a Kubernetes quantity",
    "version": "a semantic version",
    "string": "a string",
    "int": "an int",
    "bool": "a bool",
}
_CONSTRUCTOR = {"quantity": "quantity", "version": "semver"}
_SYMBOL = {"_<_": "<", "_<=_": "<=", "_>_": ">", "_>=_": ">=", "_==_": "==", "_!=_": "!="}
_MIRRORED = {"_<_": "_>_", "_<=_": "_>=_", "_>_": "_<_", "_>=_": "_<=_"}
_SHORT_VERSION = re.compile(r"v?(\d+)(?:\.(\d+))?(?:\.(\d+))?")
_LINE_BREAK = re.compile(r"\s*\n\s*")


@dataclass(frozen=True)
class TypedAccess:
    """A capacity or attribute access in a selector: its node, where it is written
    (`start` to `end`, code points), the type of its value and its source text."""

    node: Node
    start: int
    end: int
    type: str
    text: str

    @property
    def written(self) -> str:
        """The access on one line, as a hint quotes it."""
        return _LINE_BREAK.sub("", self.text)


def type_hint(
    source: str, tree: Node, accesses: tuple[TypedAccess, ...], error: CelCompileError
) -> str | None:
    """How to write right the call at `error`'s position that misuses a typed access of
    `tree` (the checked tree of `source`); None when the error is not about one."""
    offset = _offset(source, error.line, error.column)
    call = next((n for n in _calls(tree) if n.offset == offset), None)
    if call is None:
        return None
    operands = [*([call.target] if call.target is not None else []), *call.args]
    for index, operand in enumerate(operands):
        access = next((a for a in accesses if a.node is operand), None)
        if access is None:
            continue
        description = f"{access.written} is {_DESCRIPTION[access.type]}"
        if call.function in _SYMBOL and len(operands) == 2:
            other = operands[1 - index]
            function = call.function if index == 0 else _MIRRORED.get(call.function, call.function)
            right = _right_comparison(access, function, other)
            if right is not None:
                return f"{description}; write {right}"
        return description + _how_to_compare(access.type)
    return None


def _right_comparison(access: TypedAccess, function: str, other: Node) -> str | None:
    """`access <op> literal` written for the access's type, None if `other` is no literal."""
    if not isinstance(other, Const) or isinstance(other.value, bool | bytes | float):
        if access.type == "string" and isinstance(other, Const) and isinstance(other.value, bool):
            return f"{access.written} {_SYMBOL[function]} {json.dumps(str(other.value).lower())}"
        return None
    value: Any = other.value
    symbol = _SYMBOL[function]
    if access.type in _CONSTRUCTOR:
        text = str(value) if access.type == "quantity" else _full_version(str(value))
        constructed = f"{_CONSTRUCTOR[access.type]}({json.dumps(text)})"
        return f"{access.written}.compareTo({constructed}) {symbol} 0"
    if access.type == "int" and isinstance(value, str) and re.fullmatch(r"-?\d+", value):
        return f"{access.written} {symbol} {int(value)}"
    if access.type == "string" and isinstance(value, int):
        return f"{access.written} {symbol} {json.dumps(str(value))}"
    if access.type == "bool" and value in ("true", "false"):
        return f"{access.written} {symbol} {value}"
    return None


def _how_to_compare(value_type: str) -> str:
    if value_type in _CONSTRUCTOR:
        return (
            f": compare it with compareTo, isGreaterThan or isLessThan and "
            f'{_CONSTRUCTOR[value_type]}("..."), e.g. '
            f'.compareTo({_CONSTRUCTOR[value_type]}("...")) >= 0'
        )
    return f": compare it with {_DESCRIPTION[value_type]}"


def _full_version(text: str) -> str:
    """`8.0` as Kubernetes' semver() takes it (`8.0.0`: it wants all three numbers)."""
    match = _SHORT_VERSION.fullmatch(text)
    if match is None:
        return text
    return ".".join(str(int(part or 0)) for part in match.groups())


def _offset(source: str, line: int, column: int) -> int:
    lines = source.split("\n")
    return sum(len(text) + 1 for text in lines[: line - 1]) + column - 1


def _calls(tree: Node) -> list[Call]:
    return [node for node in walk(tree) if isinstance(node, Call)]
