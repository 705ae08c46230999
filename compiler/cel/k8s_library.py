"""The Kubernetes CEL libraries DRA selectors use: quantity and semver.

cel-expr-python's checker knows abstract types but its runtime cannot carry Python objects,
so each library has two faces: declarations over abstract types (`kubernetes.Quantity`,
`kubernetes.Semver`) for type-checking, and implementations over tagged strings for
evaluation. Only functions declared here can reach a tagged string, so user strings never
pass for quantities: the checker rejects `"1Gi".compareTo(...)`.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache
from typing import Any

from cel_expr_python import cel

from compiler.quantity import QuantityError, parse_quantity

T = cel.Type
QUANTITY = T.AbstractType("kubernetes.Quantity")
SEMVER = T.AbstractType("kubernetes.Semver")
_QUANTITY_TAG = "\ue000quantity:"
_SEMVER_TAG = "\ue000semver:"


def quantity_value(text: str) -> str:
    """The runtime value of a quantity (e.g. a device's memory capacity)."""
    return _QUANTITY_TAG + text


def semver_value(text: str) -> str:
    """The runtime value of a version attribute (e.g. cudaComputeCapability)."""
    return _SEMVER_TAG + _semver_text(text)


_INT64_MAX = 2**63 - 1
"""CEL integers are int64: a larger result must be an error value, not a crash in the binding."""


def _semver_text(text: str) -> str:
    parts = text.split(".")
    if not 1 <= len(parts) <= 3 or not all(p.isdigit() and int(p) <= _INT64_MAX for p in parts):
        raise ValueError(f"{text!r} is not a semantic version")
    return ".".join([*parts, "0", "0"][:3])


@lru_cache(maxsize=4096)
def _quantity(value: str) -> Fraction:
    if not value.startswith(_QUANTITY_TAG):
        raise ValueError("not a quantity")
    return parse_quantity(value.removeprefix(_QUANTITY_TAG))


def _semver(value: str) -> tuple[int, ...]:
    if not value.startswith(_SEMVER_TAG):
        raise ValueError("not a semantic version")
    return tuple(int(p) for p in value.removeprefix(_SEMVER_TAG).split("."))


def _ordered(value: str) -> Fraction | tuple[int, ...]:
    return _semver(value) if value.startswith(_SEMVER_TAG) else _quantity(value)


def _compare(left: str, right: str) -> int:
    a, b = _ordered(left), _ordered(right)
    return (a > b) - (a < b)  # type: ignore[operator]


def _is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except QuantityError:
        return False
    return True


def _is_semver(text: str) -> bool:
    try:
        _semver_text(text)
    except ValueError:
        return False
    return True


def _as_quantity(value: Fraction) -> str:
    if value.denominator == 1:
        return quantity_value(str(value.numerator))
    return quantity_value(f"{int(value * 10**9)}n")


def _new_quantity(text: str) -> str:
    parse_quantity(text)  # raises on a malformed literal: an evaluation error, as in Kubernetes
    return quantity_value(text)


def _new_semver(text: str) -> str:
    return semver_value(text)


def _as_integer(value: str) -> int:
    number = _quantity(value)
    if number.denominator != 1:
        raise ValueError("quantity is not an integer")
    if not -_INT64_MAX - 1 <= number.numerator <= _INT64_MAX:
        raise ValueError("quantity does not fit in an int64")
    return number.numerator


# (name, member, check parameter types, check result type, runtime parameter types, impl)
Signature = tuple[str, bool, list[Any], Any, list[Any], Callable[..., Any]]

SIGNATURES: list[Signature] = [
    ("quantity", False, [T.STRING], QUANTITY, [T.STRING], _new_quantity),
    ("isQuantity", False, [T.STRING], T.BOOL, [T.STRING], _is_quantity),
    ("semver", False, [T.STRING], SEMVER, [T.STRING], _new_semver),
    ("isSemver", False, [T.STRING], T.BOOL, [T.STRING], _is_semver),
    ("sign", True, [QUANTITY], T.INT, [T.STRING], lambda a: _compare(a, quantity_value("0"))),
    ("isInteger", True, [QUANTITY], T.BOOL, [T.STRING], lambda a: _quantity(a).denominator == 1),
    ("asInteger", True, [QUANTITY], T.INT, [T.STRING], _as_integer),
    ("asApproximateFloat", True, [QUANTITY], T.DOUBLE, [T.STRING], lambda a: float(_quantity(a))),
    (
        "add",
        True,
        [QUANTITY, QUANTITY],
        QUANTITY,
        [T.STRING, T.STRING],
        lambda a, b: _as_quantity(_quantity(a) + _quantity(b)),
    ),
    (
        "add",
        True,
        [QUANTITY, T.INT],
        QUANTITY,
        [T.STRING, T.INT],
        lambda a, b: _as_quantity(_quantity(a) + b),
    ),
    (
        "sub",
        True,
        [QUANTITY, QUANTITY],
        QUANTITY,
        [T.STRING, T.STRING],
        lambda a, b: _as_quantity(_quantity(a) - _quantity(b)),
    ),
    (
        "sub",
        True,
        [QUANTITY, T.INT],
        QUANTITY,
        [T.STRING, T.INT],
        lambda a, b: _as_quantity(_quantity(a) - b),
    ),
    ("major", True, [SEMVER], T.INT, [T.STRING], lambda a: _semver(a)[0]),
    ("minor", True, [SEMVER], T.INT, [T.STRING], lambda a: _semver(a)[1]),
    ("patch", True, [SEMVER], T.INT, [T.STRING], lambda a: _semver(a)[2]),
]

for _ordered_type in (QUANTITY, SEMVER):  # both are ordered with the same three members
    for _name, _result, _impl in (
        ("compareTo", T.INT, _compare),
        ("isGreaterThan", T.BOOL, lambda a, b: _compare(a, b) > 0),
        ("isLessThan", T.BOOL, lambda a, b: _compare(a, b) < 0),
    ):
        SIGNATURES.append(
            (_name, True, [_ordered_type, _ordered_type], _result, [T.STRING, T.STRING], _impl)
        )


def _overload_id(name: str, params: list[Any]) -> str:
    return f"{name}_{'_'.join(p.name().replace('.', '_') for p in params)}"


def check_declarations() -> list[Any]:
    """Function declarations over the abstract types, for type-checking only."""
    by_name: dict[str, list[Any]] = {}
    for name, member, params, result, _, _ in SIGNATURES:
        by_name.setdefault(name, []).append(
            cel.Overload(_overload_id(name, params), result, params, is_member=member)
        )
    return [cel.FunctionDecl(name, overloads) for name, overloads in by_name.items()]


def runtime_declarations() -> list[Any]:
    """Function declarations over the runtime representation, with implementations."""
    by_name: dict[str, dict[str, Any]] = {}
    for name, member, _, _, params, impl in SIGNATURES:
        overload_id = _overload_id(name, params)
        by_name.setdefault(name, {}).setdefault(
            overload_id, cel.Overload(overload_id, T.DYN, params, is_member=member, impl=impl)
        )
    return [cel.FunctionDecl(name, list(overloads.values())) for name, overloads in by_name.items()]
