"""Structural mutations of YAML nodes: parse a file, change a node, dump it back (values of
another type or size, hostile text, keys deleted, moved or repeated, nesting, anchors and
aliases, merge keys, tags). tests/fuzz/semantic.py has those that know the policy language.

Each takes a random generator and a tree and returns the mutated tree with a one-line
description (what the case's report shows), or None where it does not apply (no file parses,
no node of the wanted kind).
"""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Callable
from typing import Any

from tests.fuzz.corpus import EXTREME_NUMBERS, FIELD_NAMES, FRAGMENTS, SPECIAL_INTS, TAGS
from tests.fuzz.documents import (
    Mutated,
    Mutation,
    dotted,
    dump,
    get,
    pick_file,
    pick_node,
    pick_path,
)
from tests.fuzz.seeds import PolicyTree
from tests.fuzz.values import hostile_text, value


def edit(
    rng: random.Random,
    tree: PolicyTree,
    wanted: Callable[[tuple[str | int, ...], Any], bool],
    change: Callable[[Any, str | int, Any], str],
) -> Mutated:
    """Apply `change(parent, key, node)` to a random wanted node of a random parsable file."""
    picked = pick_node(rng, tree, wanted)
    if picked is None:
        return None
    file, documents, index, path = picked
    parent = get(documents[index], path[:-1])
    what = change(parent, path[-1], parent[path[-1]])
    return {**tree, file: dump(documents)}, f"{file}#{index}:{dotted(path)} {what}"


def delete_key(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Delete a key of a mapping (or an item of a list)."""

    def change(parent: Any, key: str | int, _: Any) -> str:
        del parent[key]
        return "deleted"

    return edit(rng, tree, lambda _p, _n: True, change)


def move_key(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Move a key and its value into another mapping of the same file."""
    picked = pick_file(rng, tree)
    if picked is None:
        return None
    file, documents = picked
    source = pick_path(rng, documents, lambda p, _: isinstance(p[-1], str))
    target = pick_path(rng, documents, lambda _, n: isinstance(n, dict))
    if source is None or target is None:
        return None
    (source_doc, source_path), (target_doc, target_path) = source, target
    parent = get(documents[source_doc], source_path[:-1])
    into = get(documents[target_doc], target_path)  # before the move, which may take it along
    into[source_path[-1]] = parent.pop(source_path[-1])
    where = f"#{target_doc}:{dotted(target_path)}"
    return {**tree, file: dump(documents)}, (
        f"{file}#{source_doc}:{dotted(source_path)} moved to {where}"
    )


def swap_type(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Replace a value by one of another type (a string by a number, a list by a mapping)."""

    def change(parent: Any, key: str | int, node: Any) -> str:
        if isinstance(node, str):
            new: Any = rng.choice([rng.randint(-5, 99), [node], {node: node}, True, None, 1.5])
        elif isinstance(node, bool) or node is None:
            new = rng.choice(["true", "yes", 1, [node], {}])
        elif isinstance(node, int | float):
            new = rng.choice([str(node), f"{node}Gi", [node], float(node), bool(node), None])
        elif isinstance(node, list):
            new = rng.choice([{"x": node}, node[0] if node else "", len(node), None])
        else:
            new = rng.choice([list(node.values()), list(node), str(node), 0, None])
        parent[key] = new
        return f"{type(node).__name__} -> {type(new).__name__}"

    return edit(rng, tree, lambda _p, _n: True, change)


def extreme_number(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Replace a number (or a quantity) by an overflow, an infinity, NaN or a fraction."""
    quantity = re.compile(r"^-?[0-9.]+([eE][0-9]+)?([KMGTPE]i?|m)?$")

    def wanted(_: Any, node: Any) -> bool:
        if isinstance(node, bool):
            return False
        return isinstance(node, int | float) or (
            isinstance(node, str) and bool(quantity.match(node))
        )

    def change(parent: Any, key: str | int, node: Any) -> str:
        parent[key] = rng.choice([n for n in EXTREME_NUMBERS if repr(n) != repr(node)])
        return f"{node!r} -> {parent[key]!r}"[:120]

    return edit(rng, tree, wanted, change)


def resize_list(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Empty a list, or make it huge (repeated items, or fresh hostile ones)."""

    def change(parent: Any, key: str | int, node: Any) -> str:
        size = rng.choice([0, 0, 2, 100, 1000, 3000])
        if size == 0 or not node:
            items = [value(rng) for _ in range(size)] if node == [] else []
        elif rng.random() < 0.7:
            items = [copy.deepcopy(node[i % len(node)]) for i in range(size)]
        else:
            items = [value(rng) for _ in range(min(size, 200))]
        parent[key] = items
        return f"list of {len(node)} -> {len(items)}"

    return edit(rng, tree, lambda _p, n: isinstance(n, list), change)


def hostile_string(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Replace a string by unicode, control characters, braces or format specifiers."""

    def change(parent: Any, key: str | int, _: Any) -> str:
        parent[key] = hostile_text(rng)
        return f"-> {parent[key]!r}"[:120]

    return edit(rng, tree, lambda _p, n: isinstance(n, str), change)


def inject(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Put a short piece (a brace, a format specifier, a non-ASCII letter, a control
    character, a separator) into a string, leaving the rest of it as it was."""

    def change(parent: Any, key: str | int, node: Any) -> str:
        piece = rng.choice(FRAGMENTS)
        at = rng.choice([0, len(node), rng.randint(0, len(node))])
        parent[key] = node[:at] + piece + node[at:]
        return f"{node!r} -> {parent[key]!r}"[:120]

    return edit(rng, tree, lambda _p, n: isinstance(n, str), change)


def free_text(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Write hostile text (controls, braces, template syntax, YAML, 1,024 characters and
    one more) into a description, which travels all the way to the emitted objects."""

    def wanted(path: Any, node: Any) -> bool:
        return isinstance(node, dict) and (path[-1] == "metadata" or "value" in node)

    def change(parent: Any, key: str | int, node: Any) -> str:
        text = rng.choice([hostile_text(rng), "x" * 1024, "x" * 1025, "é" * 1024])
        node["description"] = text
        return f"description -> {text!r}"[:120]

    return edit(rng, tree, wanted, change)


def tweak(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Change a scalar to a plausible value of the same type, so later stages get to run."""

    def change(parent: Any, key: str | int, node: Any) -> str:
        if isinstance(node, bool):
            parent[key] = not node
        elif isinstance(node, int):
            parent[key] = rng.choice([rng.randint(-2, 2 * max(node, 4)), *SPECIAL_INTS[:6]])
        else:
            parent[key] = rng.choice(
                [node.upper(), node.replace("-", "_"), node + "x", node[:-1], node * 2]
            )
        return f"{node!r} -> {parent[key]!r}"[:120]

    return edit(rng, tree, lambda _p, n: isinstance(n, int | str), change)


def extra_key(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Add a key (known elsewhere, misspelt, hostile) to a mapping."""

    def change(parent: Any, key: str | int, node: Any) -> str:
        name = rng.choice([rng.choice(FIELD_NAMES), hostile_text(rng)])
        node[name] = value(rng)
        return f"+ {name!r}"[:120]

    return edit(rng, tree, lambda _p, n: isinstance(n, dict), change)


def nest(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Wrap a value in many lists or mappings."""

    def change(parent: Any, key: str | int, node: Any) -> str:
        depth = rng.choice([1, 2, 10, 63, 64, 65, 80, 200])
        for _ in range(depth):
            node = [node] if rng.random() < 0.5 else {"x": node}
        parent[key] = node
        return f"nested {depth} deep"

    return edit(rng, tree, lambda _p, _n: True, change)


def alias(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Make a node the very object found elsewhere (dumped as an anchor and an alias; an
    alias of its own ancestor is a recursive one)."""
    picked = pick_file(rng, tree)
    if picked is None:
        return None
    file, documents = picked
    source = pick_path(rng, documents, lambda _p, n: isinstance(n, dict | list))
    target = pick_path(rng, documents, lambda _p, _n: True)
    if source is None or target is None or source[0] != target[0]:
        return None
    index = source[0]
    shared = get(documents[index], source[1])
    parent = get(documents[index], target[1][:-1])
    parent[target[1][-1]] = shared
    return {**tree, file: dump(documents)}, (
        f"{file}#{index}:{dotted(target[1])} aliases {dotted(source[1])}"
    )


def merge_key(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Give a mapping a merge key (`<<`) of another mapping, a list of them, or a scalar."""

    def change(parent: Any, key: str | int, node: Any) -> str:
        donors = [n for n in _mappings(parent) if n is not node]
        choice = rng.choice(["one", "list", "scalar", "self-copy"])
        if choice == "one" and donors:
            node["<<"] = rng.choice(donors)
        elif choice == "list" and donors:
            node["<<"] = [rng.choice(donors) for _ in range(rng.randint(1, 3))]
        elif choice == "self-copy":
            node["<<"] = copy.deepcopy(node)
        else:
            node["<<"] = value(rng)
        return f"merges ({choice})"

    mutated = edit(rng, tree, lambda _p, n: isinstance(n, dict), change)
    if mutated is None:
        return None
    # PyYAML quotes the key; a quoted '<<' is a plain string key, not a merge
    files, what = mutated
    return {k: v.replace(b"'<<':", b"<<:") for k, v in files.items()}, what


def _mappings(node: Any, limit: int = 50) -> list[dict[str, Any]]:
    """The mappings below `node` (itself included), each once, at most `limit`."""
    found: list[dict[str, Any]] = []
    queue, seen = [node], set()
    while queue and len(found) < limit:
        current = queue.pop(0)
        if not isinstance(current, dict | list) or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, dict):
            found.append(current)
            queue.extend(current.values())
        else:
            queue.extend(current)
    return found


def tag(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Put an explicit tag (core, unknown, python) before a value in the dumped file."""
    picked = pick_file(rng, tree)
    if picked is None:
        return None
    file, documents = picked
    lines = dump(documents).split(b"\n")
    candidates = [i for i, line in enumerate(lines) if re.match(rb"^\s*(- )?[\w<]+: \S", line)]
    if not candidates:
        return None
    line = rng.choice(candidates)
    chosen = rng.choice(TAGS)
    lines[line] = re.sub(rb": ", b": " + chosen.encode(), lines[line], count=1)
    return {**tree, file: b"\n".join(lines)}, f"{file}:{line + 1} tagged {chosen.strip()}"


def duplicate_key(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Repeat a `key: value` line of the dumped file (a duplicate key), the value changed
    or not."""
    picked = pick_file(rng, tree)
    if picked is None:
        return None
    file, documents = picked
    lines = dump(documents).split(b"\n")
    candidates = [i for i, line in enumerate(lines) if re.match(rb"^\s*[\w<]+:", line)]
    if not candidates:
        return None
    line = rng.choice(candidates)
    repeated = lines[line]
    if rng.random() < 0.5:
        repeated = repeated.split(b":", 1)[0] + b": " + repr(value(rng)).encode()[:40]
    lines.insert(line + 1, repeated)
    return {**tree, file: b"\n".join(lines)}, f"{file}:{line + 1} key repeated"


STRUCTURAL: dict[str, Mutation] = {
    "delete-key": delete_key,
    "move-key": move_key,
    "duplicate-key": duplicate_key,
    "swap-type": swap_type,
    "extreme-number": extreme_number,
    "resize-list": resize_list,
    "hostile-string": hostile_string,
    "inject": inject,
    "free-text": free_text,
    "tweak": tweak,
    "extra-key": extra_key,
    "nest": nest,
    "alias": alias,
    "merge-key": merge_key,
    "tag": tag,
}
"""Every mutation of YAML nodes, by the name the summary uses."""
