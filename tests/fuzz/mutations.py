"""Draw a fuzz case: a valid base tree and one to three mutations, from (run seed, index).

Case `index` of run `seed` is the same tree on every machine and run (given the same base
trees), so a failure is replayed from its two numbers as well as from its saved files.
Structural mutations are drawn three times as often as textual ones, and those that tend
to leave the policy valid more often than others (WEIGHTS): most damage stops at load, and
the later stages are reached only by changes they accept.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from tests.fuzz.seeds import PolicyTree
from tests.fuzz.semantic import SEMANTIC
from tests.fuzz.structural import STRUCTURAL
from tests.fuzz.textual import TEXTUAL

STRUCTURAL_ALL = {**STRUCTURAL, **SEMANTIC}
"""Structural mutations: of YAML nodes, and of the policy they hold."""

MUTATIONS = {**STRUCTURAL_ALL, **TEXTUAL}

WEIGHTS = {
    "demand": 8,
    "partition": 3,
    "taint": 3,
    "tweak": 4,
    "inject": 4,
    "free-text": 4,
    "rename": 3,
    "dangling-reference": 2,
    "delete-document": 2,
    "move-document": 2,
    "duplicate-document": 2,
    "extreme-number": 2,
    "resize-list": 2,
    "line-endings": 2,
    "bom": 2,
}
"""How often each mutation is drawn against the others of its family (1 if not listed):
those that usually leave the policy valid are drawn more, so that a good share of the cases
get past the input checks to resolve, solve, emit and write."""

TEXTUAL_SHARE = 0.25
"""Textual damage stops at load nearly always: a quarter of the mutations are textual."""


@dataclass(frozen=True)
class Case:
    """One mutated tree and how it was made."""

    seed: str
    index: int
    base: str
    """The name of the valid tree it was mutated from."""
    mutations: tuple[str, ...]
    """`name: description` of each mutation, in order."""
    tree: PolicyTree


def draw_case(seed: str, index: int, bases: dict[str, PolicyTree], weights: dict[str, int]) -> Case:
    """Case `index` of run `seed`: a base tree (drawn by `weights`) and its mutations."""
    rng = random.Random(f"{seed}:{index}")
    names = sorted(bases)
    base = rng.choices(names, [weights.get(name, 1) for name in names])[0]
    tree = dict(bases[base])
    applied: list[str] = []
    for _ in range(rng.choice([1, 1, 1, 1, 2, 2, 3])):
        # a mutation that does not apply (no such node) is redrawn
        for _attempt in range(10 if tree else 0):
            family = TEXTUAL if rng.random() < TEXTUAL_SHARE else STRUCTURAL_ALL
            known = sorted(family)
            name = rng.choices(known, [WEIGHTS.get(n, 1) for n in known])[0]
            try:
                mutated = family[name](rng, tree)
            except RecursionError:  # PyYAML dumping what earlier mutations nested deep
                mutated = None
            if mutated is not None:
                tree, description = mutated
                applied.append(f"{name}: {description}")
                break
    return Case(seed, index, base, tuple(applied), tree)
