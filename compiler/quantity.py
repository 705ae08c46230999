"""Kubernetes resource quantities ("79Gi", "500m", "1.5e3") as exact rational numbers."""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_BINARY_LARGEST_FIRST = sorted(_BINARY.items(), key=lambda item: -item[1])
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_PATTERN = re.compile(
    r"^(?P<sign>[+-]?)(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE](?P<exponent>[+-]?[0-9]+))?$"
)
MAX_EXPONENT = 30
"""Quantities beyond 10^30 are refused: no GPU fleet needs them, and they are a DoS vector."""


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity."""


@lru_cache(maxsize=4096)
def parse_quantity(text: str) -> Fraction:
    """The exact value of a Kubernetes quantity string, e.g. "79Gi" -> 84825604096."""
    match = _PATTERN.match(text.strip()) if isinstance(text, str) else None
    if match is None:
        raise QuantityError(f"{text!r} is not a Kubernetes quantity (e.g. 80Gi, 512Mi, 500m, 24)")
    value = Fraction(match["number"])
    if match["exponent"] is not None:
        exponent = int(match["exponent"])
        if abs(exponent) > MAX_EXPONENT:
            raise QuantityError(f"{text!r}: exponent out of range")
        value *= Fraction(10) ** exponent
    elif match["suffix"] in _BINARY:
        value *= _BINARY[match["suffix"]]
    else:
        value *= _DECIMAL[match["suffix"] or ""]
    if value > Fraction(10) ** MAX_EXPONENT:
        raise QuantityError(f"{text!r} is too large")
    return -value if match["sign"] == "-" else value


@lru_cache(maxsize=4096)
def format_bytes(value: Fraction | int) -> str:
    """A byte count in the largest binary unit that divides it exactly (e.g. 2Ti, 79Gi, 300M);
    remembered, as the same few amounts recur in every namespace's quota."""
    number = Fraction(value)
    if number.denominator != 1:
        return format_decimal(number)
    whole = number.numerator
    for suffix, factor in _BINARY_LARGEST_FIRST:
        if whole and whole % factor == 0:
            return f"{whole // factor}{suffix}"
    return str(whole)


@lru_cache(maxsize=4096)
def format_decimal(value: Fraction | int) -> str:
    """A quantity in decimal units, exactly: whole numbers plainly, fractions in milli-units
    (remembered, as format_bytes is)."""
    number = Fraction(value)
    if number.denominator == 1:
        return str(number.numerator)
    milli = number * 1000
    if milli.denominator == 1:
        return f"{milli.numerator}m"
    nano = number * 10**9
    return f"{int(nano)}n"
