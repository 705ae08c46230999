"""Check a YAML text against gpufleet's budgets before a composer builds it.

Why a separate pass: composers recurse (libyaml's in C: 100,000 levels of nesting crashed the
process here; ruamel.yaml's, the fallback, in Python at about 0.1 ms a node, and quadratic
in flow nesting), and converting a composed alias bomb expands it. libyaml's event parser
(through PyYAML) streams the text in C, so this pass can stop at the first node past a
budget, in milliseconds:

- every node counts, and an alias counts as the whole subtree it repeats, so an alias bomb
  (billion laughs) is refused before anything is expanded;
- nesting deeper than MAX_DEPTH (aliases included) is refused before anything recurses;
- tags other than YAML's plain core types are refused, as are recursive aliases and anchors
  defined twice (legal YAML, but read into silently wrong data).

Syntax errors found here are reported here. A text libyaml cannot parse (it speaks YAML 1.1)
is read by ruamel.yaml's YAML 1.2 parser instead, and the same budgets are applied to that
parser's events (`check_yaml12_budget`) before anything is composed: ruamel.yaml's composer
follows merge keys and aliases as eagerly as any other. A short text without anchors,
aliases, tags or merge keys cannot fail the pass where composing it succeeds
(`within_budget_unchecked`), and the loader skips the pass for it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

import yaml

from compiler.diagnostics import Span, fail

MAX_NODES_PER_FILE = 10_000
"""Nodes per file, aliases expanded: far more than a real policy file has (the example's
largest has 60), and at most about two seconds of round-trip loading."""

MAX_DEPTH = 64
"""Deeper nesting than the policy language ever needs."""

ALLOWED_TAGS = frozenset(
    "tag:yaml.org,2002:" + name
    for name in ("map", "seq", "str", "int", "float", "bool", "null", "timestamp", "merge")
)
"""Explicit tags a policy may carry: YAML's core types only (no !!binary, !!set, !!python/...)."""

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class _EventKinds:
    """A parser's event classes (PyYAML's and ruamel.yaml's have the same shape)."""

    document_start: type[Any]
    node: type[Any]
    scalar: type[Any]
    alias: type[Any]
    collection_start: type[Any]
    collection_end: type[Any]
    mapping_start: type[Any]


def _kinds(module: object) -> _EventKinds:
    return _EventKinds(
        *(
            getattr(module, name)
            for name in (
                "DocumentStartEvent",
                "NodeEvent",
                "ScalarEvent",
                "AliasEvent",
                "CollectionStartEvent",
                "CollectionEndEvent",
                "MappingStartEvent",
            )
        )
    )


Event = Any
"""A PyYAML or ruamel.yaml event (the two libraries have no common type)."""

_LIBYAML_EVENTS = _kinds(yaml)


@cache
def _yaml12_events() -> _EventKinds:
    """ruamel.yaml's event classes, imported only when a text needs them."""
    import ruamel.yaml.events

    return _kinds(ruamel.yaml.events)


@dataclass
class _Collection:
    """An open sequence or mapping: how many nodes and levels it holds so far."""

    anchor: str | None
    mapping: bool
    nodes: int = 1
    height: int = 0
    children: int = 0


class _Budget:
    """Counts nodes and depth event by event, expanding aliases arithmetically."""

    def __init__(self, shown: str, kinds: _EventKinds, max_nodes: int) -> None:
        self.shown = shown
        self.kinds = kinds
        self.max_nodes = max_nodes
        self.total = 0
        self.open: list[_Collection] = []
        self.anchors: dict[str, tuple[int, int]] = {}
        """Closed anchors of the current document: name -> (nodes, height)."""

    def span(self, event: Event) -> Span:
        mark = event.start_mark
        return Span(self.shown, mark.line + 1, mark.column + 1) if mark else Span(self.shown, 1, 1)

    def feed(self, event: Event) -> None:
        if isinstance(event, self.kinds.document_start):
            self.anchors.clear()
            return
        if isinstance(event, self.kinds.node):
            self._check_key(event)
        if isinstance(event, self.kinds.scalar):
            self._check_tag(event)
            if event.anchor is not None:
                self._check_new_anchor(event, event.anchor)
                self.anchors[event.anchor] = (1, 0)
            self._add(event, 1, 0)
        elif isinstance(event, self.kinds.alias):
            nodes, height = self._alias(event)
            self._add(event, nodes, height)
        elif isinstance(event, self.kinds.collection_start):
            self._check_tag(event)
            if event.anchor is not None:
                self._check_new_anchor(event, event.anchor)
            self._add(event, 1, 0)
            self.open.append(_Collection(event.anchor, isinstance(event, self.kinds.mapping_start)))
        elif isinstance(event, self.kinds.collection_end):
            done = self.open.pop()
            if done.anchor is not None:
                self.anchors[done.anchor] = (done.nodes, done.height)
            if self.open:
                parent = self.open[-1]
                parent.nodes += done.nodes - 1  # its own node was counted when it opened
                parent.height = max(parent.height, done.height + 1)

    def _add(self, event: Event, nodes: int, height: int) -> None:
        depth = len(self.open) + height
        if depth > MAX_DEPTH:
            raise fail(
                "GF120",
                f"nesting deeper than {MAX_DEPTH} levels",
                self.span(event),
                "policies are a few levels deep; flatten this structure",
            )
        self.total += nodes
        if self.total > self.max_nodes:
            expanded = " (aliases expanded)" if isinstance(event, self.kinds.alias) else ""
            raise fail(
                "GF120",
                f"file has more than {self.max_nodes} YAML nodes{expanded}",
                self.span(event),
                "split the policy into smaller files; anchors and aliases that multiply are "
                "refused",
            )
        if self.open:
            parent = self.open[-1]
            parent.nodes += nodes
            parent.height = max(parent.height, height + 1)

    def _check_key(self, event: Event) -> None:
        """Mapping keys are scalars: ruamel cannot even hash a key that holds a collection."""
        if not self.open:
            return
        parent = self.open[-1]
        is_key = parent.mapping and parent.children % 2 == 0
        parent.children += 1
        collection = isinstance(event, self.kinds.collection_start) or (
            isinstance(event, self.kinds.alias) and self.anchors.get(event.anchor or "", (1, 0))[1]
        )
        if is_key and collection:
            raise fail(
                "GF107",
                "mapping keys must be plain scalars",
                self.span(event),
                "a key is a name such as `nodes:`; a list or mapping cannot be one",
            )

    def _alias(self, event: Event) -> tuple[int, int]:
        name = event.anchor
        if any(c.anchor == name for c in self.open):
            raise fail(
                "GF103",
                f"alias *{name} refers to a node that contains it",
                self.span(event),
                "recursive structures are not allowed: write the data out",
            )
        return self.anchors.get(name or "", (1, 0))  # undefined: the loader reports it

    def _check_new_anchor(self, event: Event, name: str) -> None:
        if name in self.anchors or any(c.anchor == name for c in self.open):
            raise fail(
                "GF103",
                f"anchor &{name} is defined twice in this document",
                self.span(event),
                "give each anchor its own name",
            )

    def _check_tag(self, event: Event) -> None:
        tag = event.tag
        if tag is not None and tag not in ALLOWED_TAGS:
            raise fail(
                "GF103",
                f"YAML tag {tag} is not allowed",
                self.span(event),
                "policy files use plain YAML: remove the tag",
            )


SHORT_TEXT = 3_000
"""The longest text the loader may compose without the budget pass first: at most that many
levels of libyaml's recursive composer (20,000 composed here without trouble; 100,000 crashed
the process)."""


def within_budget_unchecked(text: str, max_nodes: int = MAX_NODES_PER_FILE) -> bool:
    """True when the budget pass on `text` could fail only where composing and converting it
    fail too, so that the loader may skip the pass (about half of its time on a small policy
    file) and go back to it when anything fails:

    - no `&`, `*` or `!`: no anchor, alias or tag (so nothing expands, and no tag to refuse);
    - no `<<`: no merge key, so the loader's converter meets every node at its own depth and
      refuses nesting deeper than MAX_DEPTH, or a collection as a key, as the pass would;
    - at most SHORT_TEXT characters, and few enough for `max_nodes`: without aliases each
      node is a scalar with characters of its own, or comes with an indicator character
      (`-`, `?`, `:`, `,`, a bracket), at most three for one (`?` alone is a mapping, its
      empty key and its empty value), so a text has at most 3 * len(text) + 3 nodes.
    """
    return (
        len(text) <= SHORT_TEXT
        and 3 * len(text) + 3 <= max_nodes
        and not any(mark in text for mark in ("&", "*", "!", "<<"))
    )


UNSUPPORTED_YAML_VERSION = "found incompatible YAML document"
"""libyaml's message for a `%YAML` directive other than 1.1 or 1.2."""


def check_budget(text: str, shown: str, max_nodes: int = MAX_NODES_PER_FILE) -> None:
    """Raise CompileError if `text` is not YAML, or is larger, deeper or stranger than allowed
    (`max_nodes`: a policy file's budget unless the reader of a larger kind of file says)."""
    budget = _Budget(shown, _LIBYAML_EVENTS, max_nodes)
    try:
        for event in yaml.parse(text, Loader=_LOADER):
            budget.feed(event)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        problem = " ".join(str(part) for part in (error.context, error.problem) if part)
        if problem.strip() == UNSUPPORTED_YAML_VERSION:
            hint = "gpufleet reads YAML 1.2: write `%YAML 1.2` or remove the directive"
            raise fail(
                "GF101",
                f"{UNSUPPORTED_YAML_VERSION} (a %YAML directive)",
                Span(shown, line, column),
                hint,
            ) from None
        raise fail(
            "GF101",
            problem.strip() or "invalid YAML",
            Span(shown, line, column),
            "check the YAML syntax near here",
        ) from None
    except yaml.reader.ReaderError as error:
        raise fail(
            "GF101",
            f"character U+{_codepoint(error.character):04X} is not allowed in YAML",
            _position(text, shown, error.position),
            "remove the control character, or write it as an escape in a double-quoted string",
        ) from None
    except yaml.YAMLError as error:
        raise fail("GF101", str(error).strip(), Span(shown, 1, 1)) from None
    except UnicodeEncodeError as error:  # only text not read from a file can hold surrogates
        message = f"text is not valid Unicode ({error.reason} at character {error.start})"
        raise fail("GF109", message, _position(text[: error.start], shown, 1 << 62)) from None


def check_yaml12_budget(
    events: Iterable[Event], shown: str, max_nodes: int = MAX_NODES_PER_FILE
) -> None:
    """Raise CompileError if ruamel.yaml's events for a text (which libyaml could not parse)
    are larger, deeper or stranger than allowed, stopping at the first event past a budget.

    Syntax errors are ruamel.yaml's own to raise: the caller then reports libyaml's.
    """
    budget = _Budget(shown, _yaml12_events(), max_nodes)
    for event in events:
        budget.feed(event)


def _codepoint(character: int | str) -> int:
    return character if isinstance(character, int) else ord(character[:1] or "?")


def _position(text: str, shown: str, byte_offset: int) -> Span:
    """The line and column of a UTF-8 byte offset into `text` (libyaml counts bytes)."""
    offset = len(text.encode("utf-8")[: max(byte_offset, 0)].decode("utf-8", errors="ignore"))
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return Span(shown, line, column)
