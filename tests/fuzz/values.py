"""Random values for mutations: hostile text, names an object could be renamed to, and
small YAML values of every type."""

from __future__ import annotations

import random
from typing import Any

from tests.fuzz.corpus import (
    CONTROL_STRINGS,
    EXTREME_NUMBERS,
    FIELD_NAMES,
    FORMAT_STRINGS,
    HOSTILE_STRINGS,
)


def hostile_text(rng: random.Random) -> str:
    """A string from the corpus, a format string, a control sequence, or random unicode."""
    pool = rng.choice([HOSTILE_STRINGS, FORMAT_STRINGS, CONTROL_STRINGS, None])
    if pool is not None:
        return str(rng.choice(pool))
    alphabet = [chr(rng.randint(0, 0x2FFF)) for _ in range(8)] + list("ab-_.{}%$")
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 24)))


def hostile_name(rng: random.Random, name: str) -> str:
    """A name an object could be renamed to: valid (another spelling that normalises to
    it, a longer one, one at the length limit), or not (hostile, injected, too long)."""
    spelling = rng.choice(
        ["upper", "underscore", "valid", "valid", "limit", "suffix", "hostile", "inject", "long"]
    )
    if spelling == "upper":
        return name.upper()
    if spelling == "underscore":
        return name.replace("-", "_")
    if spelling == "valid":
        return name + rng.choice(["-2", "x", "-b-c", "0"])
    if spelling == "limit":
        return (name + "-" + "a" * 63)[:63]
    if spelling == "suffix":
        return name + rng.choice(["-", "\u200b", "\u0301", " ", ".", "{index}}"])
    if spelling == "inject":
        return name + rng.choice(FORMAT_STRINGS + CONTROL_STRINGS)
    if spelling == "long":
        return name + "-" + "a" * rng.choice([60, 250, 5000])
    return hostile_text(rng)


def value(rng: random.Random, depth: int = 0) -> Any:
    """A random YAML value: a hostile scalar or a small collection of them."""
    kind = rng.randint(0, 9 if depth < 2 else 6)
    if kind <= 2:
        return hostile_text(rng)
    if kind <= 4:
        return rng.choice(EXTREME_NUMBERS)
    if kind == 5:
        return rng.choice([True, False, None])
    if kind == 6:
        return rng.randint(-10, 100)
    if kind <= 8:
        return [value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(FIELD_NAMES): value(rng, depth + 1) for _ in range(rng.randint(0, 3))}
