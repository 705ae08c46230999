"""A short policy text that can hold nothing the budget pass refuses is composed without the
pass (load.budget.within_budget_unchecked). The checked path is the oracle: whatever a text
holds, both paths give the same documents, or the same diagnostics."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from compiler.diagnostics import CompileError
from compiler.load import loader
from compiler.load.budget import MAX_DEPTH, MAX_NODES_PER_FILE, SHORT_TEXT, within_budget_unchecked

REPO = Path(__file__).resolve().parent.parent
POLICY_TEXTS = sorted(path.read_text() for path in (REPO / "policies").rglob("*.yaml"))
SHORT_POLICY_TEXTS = [text for text in POLICY_TEXTS if within_budget_unchecked(text)]

PIECES = [
    "[", "]", "{", "}", "- ", "-", ": ", ":", "? ", "?", ",", "\n", "  ", "\t", "---\n", "...\n",
    '"', "'", "#", "|\n", ">\n", "\x07", "\ud800", "%YAML 2.0\n", "%YAML 1.1\n", "a: [b, c]",
    "x: 1\nx: 2\n", "0x1F", "1e3", ".nan", "~", "null", "yes", "2026-01-01", "é",
]  # fmt: skip
"""What the random edits insert: YAML's indicators, breaks, quotes, control characters, lone
surrogates, directives and scalars that resolve to other types."""

ALIASES_OF_7000_NODES = (
    "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c]\n"
)
"""One document within the node budget, two past it: the budget is the file's."""

HAZARDS = [
    "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
    "[" * MAX_DEPTH + "]" * MAX_DEPTH,
    "".join(f"{' ' * 2 * level}k{level}:\n" for level in range(MAX_DEPTH + 1))
    + "  " * (MAX_DEPTH + 1)
    + "v",
    "- " * (MAX_DEPTH + 1) + "x\n",
    "[" * (SHORT_TEXT - 1),
    "? [a]\n: b\n",
    "{[a]: b}\n",
    "{a: 1, a: 2, [x]: 3}\n",
    "a: {b: 1, b: 2}\n",
    "?\n",
    "a: b\n\x01\n",
    "%YAML 2.0\n---\na: b\n",
    '"\\ud800": x\n',
    "fallback: {a: b, c:}\n",
    "a: 1\n---\n---\nb: [1, 2]\n",
    "a: 99999999999999999999\n",
    "[" * (MAX_DEPTH - 1) + "{<<: {a: b}}" + "]" * (MAX_DEPTH - 1),
    "a: [1, !!binary aGk=]\n",
    ALIASES_OF_7000_NODES,
    "---\n".join([ALIASES_OF_7000_NODES] * 2),
]
"""Texts each near or past one of the pass's budgets, or refused by the composer or converter."""


def outcome(text: str) -> tuple[str, Any]:
    """What parse_documents makes of `text`: the documents (data shown by repr: NaN is not
    equal to itself) with their positions, or the diagnostics."""
    try:
        documents = loader.parse_documents(text, "f.yaml", "policies/f.yaml")
    except CompileError as error:
        return "refused", error.diagnostics
    return "read", [(d.index, repr(d.data), d.positions) for d in documents]


def checked_outcome(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Any]:
    """`outcome` with the budget pass run on every text."""
    with monkeypatch.context() as patched:
        patched.setattr(loader, "within_budget_unchecked", lambda text, max_nodes: False)
        return outcome(text)


def edited(rng: random.Random, text: str) -> str:
    """`text` after one to four random edits: a piece inserted, a span cut or a line doubled."""
    for _ in range(rng.randint(1, 4)):
        at = rng.randint(0, len(text))
        match rng.randrange(3):
            case 0:
                text = text[:at] + rng.choice(PIECES) + text[at:]
            case 1:
                text = text[:at] + text[at + rng.randint(1, 12) :]
            case _:
                lines = text.splitlines(keepends=True) or [""]
                line = rng.randrange(len(lines))
                text = "".join(lines[: line + 1] + lines[line:])
    return text


def test_the_repository_policies_are_mostly_short_and_plain() -> None:
    assert len(SHORT_POLICY_TEXTS) >= len(POLICY_TEXTS) // 2


def test_a_short_plain_policy_is_composed_without_the_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*args: object) -> None:
        raise AssertionError("the budget pass ran")

    expected = checked_outcome(SHORT_POLICY_TEXTS[0], monkeypatch)
    monkeypatch.setattr(loader, "check_budget", refused)
    assert outcome(SHORT_POLICY_TEXTS[0]) == expected
    assert expected[0] == "read"


@pytest.mark.parametrize(
    ("text", "unchecked"),
    [
        ("a: b\n", True),
        ("a: &x b\nc: *x\n", False),
        ("a: !!str b\n", False),
        ("a: {<<: {b: 1}}\n", False),
        ("a: " + "b" * SHORT_TEXT, False),
        ("- a\n" * 5, True),
    ],
)
def test_what_may_skip_the_pass(text: str, unchecked: bool) -> None:
    assert within_budget_unchecked(text) is unchecked


def test_a_small_node_budget_is_respected() -> None:
    assert within_budget_unchecked("[a, b]", 3 * len("[a, b]") + 3)
    assert not within_budget_unchecked("[a, b]", 3 * len("[a, b]") + 2)
    assert within_budget_unchecked("x" * SHORT_TEXT, MAX_NODES_PER_FILE)


@pytest.mark.parametrize("text", HAZARDS)
def test_hazards_are_reported_as_the_checked_path_reports_them(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert outcome(text) == checked_outcome(text, monkeypatch)


def test_edited_policies_are_read_or_refused_as_the_checked_path_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = random.Random(20261128)
    taken = refused = 0
    for _ in range(1000):
        text = edited(rng, rng.choice(SHORT_POLICY_TEXTS))
        expected = checked_outcome(text, monkeypatch)
        assert outcome(text) == expected, text
        taken += within_budget_unchecked(text)
        refused += expected[0] == "refused"
    assert taken > 700 and refused > 300  # both paths, and both kinds of outcome, were met
