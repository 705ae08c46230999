"""Policy files as YAML documents for structural mutations: parse, walk, dump back."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import yaml

from tests.fuzz.seeds import PolicyTree

Path = tuple[str | int, ...]

Mutated = tuple[PolicyTree, str] | None
"""A mutated tree and a one-line description of the change, or None: it did not apply."""
Mutation = Callable[[random.Random, PolicyTree], Mutated]

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


MAX_DEPTH = 150
"""Deeper files are not parsed here: libyaml's composer recurses in C and overflows its
stack (a segmentation fault) a few thousand levels down."""

MAX_ALIASES = 20
"""Files with more aliases are not parsed here: PyYAML copies what a merge key merges, so
a merge bomb would take it minutes and gigabytes."""


def load(content: bytes) -> list[Any] | None:
    """The documents of a file, or None when it is not YAML PyYAML reads (or is empty, or
    nested deeper than MAX_DEPTH)."""
    try:
        text = content.decode("utf-8")
        if not _shallow(text):
            return None
        documents = list(yaml.load_all(text, Loader=_LOADER))
    except Exception:  # PyYAML has its own crashes on hostile text (a bad !!timestamp)
        return None
    return documents if documents and all(d is not None for d in documents) else None


def _shallow(text: str) -> bool:
    """Whether no collection nests deeper than MAX_DEPTH and there are at most MAX_ALIASES
    aliases (from libyaml's event stream, which neither recurses nor expands)."""
    depth = aliases = 0
    for event in yaml.parse(text, Loader=_LOADER):
        if isinstance(event, yaml.AliasEvent):
            aliases += 1
            if aliases > MAX_ALIASES:
                return False
        elif isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                return False
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    return True


def dump(documents: list[Any]) -> bytes:
    """The documents as block YAML (shared nodes become anchors and aliases)."""
    text: str = yaml.dump_all(
        documents, Dumper=_DUMPER, allow_unicode=True, sort_keys=False, width=1 << 30
    )
    return text.encode("utf-8", "surrogatepass")


def paths(node: Any, limit: int = 2000) -> list[Path]:
    """Paths of the nodes of a document, breadth first, at most `limit` of them (an alias
    bomb that PyYAML loaded as shared lists would have billions)."""
    found: list[Path] = []
    queue: list[tuple[Path, Any]] = [((), node)]
    seen: set[int] = set()
    while queue and len(found) < limit:
        path, current = queue.pop(0)
        found.append(path)
        if isinstance(current, dict | list):
            if id(current) in seen:
                continue  # an alias: its nodes are walked once
            seen.add(id(current))
        if isinstance(current, dict):
            queue.extend(((*path, k), v) for k, v in current.items() if isinstance(k, str))
        elif isinstance(current, list):
            queue.extend(((*path, i), v) for i, v in enumerate(current))
    return found


def get(node: Any, path: Path) -> Any:
    """The node at `path`."""
    for step in path:
        node = node[step]
    return node


def pick_file(rng: random.Random, tree: PolicyTree) -> tuple[str, list[Any]] | None:
    """A file of the tree that parses, and its documents (None when none parses)."""
    files = sorted(tree)
    rng.shuffle(files)
    for file in files:
        documents = load(tree[file])
        if documents is not None:
            return file, documents
    return None


def pick_node(
    rng: random.Random, tree: PolicyTree, wanted: Callable[[Path, Any], bool]
) -> tuple[str, list[Any], int, Path] | None:
    """A random wanted node of a random file that has one: (file, its documents, document
    index, path); None when no parsable file has one."""
    files = sorted(tree)
    rng.shuffle(files)
    for file in files:
        documents = load(tree[file])
        found = pick_path(rng, documents, wanted) if documents is not None else None
        if found is not None:
            assert documents is not None
            return file, documents, *found
    return None


def pick_path(
    rng: random.Random, documents: list[Any], wanted: Callable[[Path, Any], bool]
) -> tuple[int, Path] | None:
    """(document index, path) of a random node below a document root that `wanted` accepts."""
    candidates = [
        (index, path)
        for index, document in enumerate(documents)
        for path in paths(document)
        if path and wanted(path, get(document, path))
    ]
    return rng.choice(candidates) if candidates else None


def dotted(path: Path) -> str:
    """A path as `spec.quotas[0].tier`, for a mutation's description."""
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else f".{step}"
    return text.lstrip(".") or "<root>"


def names(tree: PolicyTree) -> list[str]:
    """Every object name (metadata.name) in the tree's parsable files."""
    found: list[str] = []
    for content in tree.values():
        for document in load(content) or []:
            meta = document.get("metadata") if isinstance(document, dict) else None
            if isinstance(meta, dict) and isinstance(meta.get("name"), str):
                found.append(meta["name"])
    return sorted(set(found))
