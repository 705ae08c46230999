"""Structural mutations: parse a file, change its documents, dump it back.

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

from tests.fuzz.corpus import (
    CONTROL_STRINGS,
    EXTREME_NUMBERS,
    FIELD_NAMES,
    FORMAT_STRINGS,
    HOSTILE_STRINGS,
    REFERENCE_KEYS,
    SPECIAL_INTS,
    TAGS,
)
from tests.fuzz.documents import dotted, dump, get, load, names, pick_file, pick_node, pick_path
from tests.fuzz.seeds import PolicyTree

Mutated = tuple[PolicyTree, str] | None
Mutation = Callable[[random.Random, PolicyTree], Mutated]


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


def _edit(
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

    return _edit(rng, tree, lambda _p, _n: True, change)


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

    return _edit(rng, tree, lambda _p, _n: True, change)


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

    return _edit(rng, tree, wanted, change)


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

    return _edit(rng, tree, lambda _p, n: isinstance(n, list), change)


def dangling_reference(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Point a reference (tier, cluster, pool, priority, namespace, ...) at nothing."""

    def wanted(path: Any, _: Any) -> bool:
        return isinstance(path[-1], str) and path[-1] in REFERENCE_KEYS

    def change(parent: Any, key: str | int, node: Any) -> str:
        ghost = rng.choice(["ghost", "missing-object", "h100x", "c9", "Training", "default"])
        parent[key] = [ghost] if isinstance(node, list) else ghost
        return f"-> {ghost!r}"

    return _edit(rng, tree, wanted, change)


def hostile_string(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Replace a string by unicode, control characters, braces or format specifiers."""

    def change(parent: Any, key: str | int, _: Any) -> str:
        parent[key] = hostile_text(rng)
        return f"-> {parent[key]!r}"[:120]

    return _edit(rng, tree, lambda _p, n: isinstance(n, str), change)


def free_text(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Write hostile text (controls, braces, template syntax, YAML, 1,024 characters and
    one more) into a description, which travels all the way to the emitted objects."""

    def wanted(path: Any, node: Any) -> bool:
        return isinstance(node, dict) and (path[-1] == "metadata" or "value" in node)

    def change(parent: Any, key: str | int, node: Any) -> str:
        text = rng.choice([hostile_text(rng), "x" * 1024, "x" * 1025, "é" * 1024])
        node["description"] = text
        return f"description -> {text!r}"[:120]

    return _edit(rng, tree, wanted, change)


DEMAND_KEYS = frozenset({"guaranteed", "limit", "gang", "nodes", "gpusPerNode", "node", "device"})
"""Numbers that size demand or capacity: changing them keeps a policy valid and moves the
solver between feasible and infeasible."""

MIG_PROFILES = ["1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb", "1g.12gb"]


def demand(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Scale a guarantee, limit, gang, node count or GPUs per node (to what still parses:
    so that the solver decides, and explains when it does not fit)."""

    keys = {"guaranteed"} if rng.random() < 0.5 else DEMAND_KEYS  # mostly: more than fits

    def wanted(path: Any, node: Any) -> bool:
        return path[-1] in keys and isinstance(node, int) and not isinstance(node, bool)

    def change(parent: Any, key: str | int, node: Any) -> str:
        if key == "guaranteed":  # more than the fleet holds, but no more than the limit
            parent[key] = node * rng.choice([2, 3, 4, 8, 16]) + rng.randint(0, 3)
            if isinstance(parent.get("limit"), int):
                parent["limit"] = max(parent["limit"], parent[key])
        elif key == "nodes":  # fewer nodes than the guarantees need
            parent[key] = rng.choice([0, 1, 1, 2, max(0, node - 1), node * 2])
        else:
            parent[key] = rng.choice(
                [0, 1, node + 1, max(0, node - 1), node * 2, node * 4, 7, 8, 9, 16]
            )
        return f"{node} -> {parent[key]}"

    return _edit(rng, tree, wanted, change)


def partition(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Change how GPUs are partitioned: a pool's MIG mode, a tier's MIG profile."""

    def wanted(path: Any, node: Any) -> bool:
        return path[-1] in ("mig", "partition") or (
            isinstance(node, dict) and "gpusPerNode" in node
        )

    def change(parent: Any, key: str | int, node: Any) -> str:
        if isinstance(node, dict):
            node["mig"] = rng.choice(["allowed", "disabled", "mixed", "required"])
            return f"mig: {node['mig']}"
        parent[key] = rng.choice(
            MIG_PROFILES if key == "partition" else ["allowed", "disabled", "mixed"]
        )
        return f"{node!r} -> {parent[key]!r}"

    return _edit(rng, tree, wanted, change)


def taint(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Taint a GPU of a pool found in the tree (a DeviceTaint document), or let a team
    tolerate a taint."""
    pools = [
        (
            document["metadata"]["name"],
            pool["name"],
            pool.get("nodes", 1),
            pool.get("gpusPerNode", 1),
        )
        for content in tree.values()
        for document in load(content) or []
        if _is(document, "Cluster")
        for pool in document["spec"].get("nodePools", [])
        if isinstance(pool, dict) and isinstance(pool.get("name"), str)
    ]
    key = rng.choice(["example.com/ecc", "gpu.nvidia.com/xid", "nvidia.com/gpu"])
    if pools and rng.random() < 0.6:
        cluster, pool, nodes, gpus = rng.choice(pools)
        node = rng.randrange(max(1, nodes)) if isinstance(nodes, int) else 0
        device = rng.randrange(max(1, gpus)) if isinstance(gpus, int) else 0
        effect = rng.choice(["NoSchedule", "NoExecute", "None"])
        document = {
            "apiVersion": "gpufleet.dev/v1alpha1",
            "kind": "DeviceTaint",
            "metadata": {"name": f"fuzz-{node}-{device}"},
            "spec": {
                "cluster": cluster,
                "pool": pool,
                "node": node,
                "device": device,
                "key": key,
                "effect": effect,
            },
        }
        name = f"taints/fuzz-{rng.randrange(100)}.yaml"
        return {**tree, name: dump([document])}, f"{name}: {cluster}/{pool} {node}/{device} {key}"

    def wanted(path: Any, node: Any) -> bool:
        return path == ("spec",) and isinstance(node, dict) and "quotas" in node

    def change(parent: Any, _key: str | int, node: Any) -> str:
        node["tolerations"] = [{"key": key}]
        return f"tolerates {key}"

    return _edit(rng, tree, wanted, change)


def _is(document: Any, kind: str) -> bool:
    return (
        isinstance(document, dict)
        and document.get("kind") == kind
        and isinstance(document.get("metadata"), dict)
        and isinstance(document.get("spec"), dict)
    )


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

    return _edit(rng, tree, lambda _p, n: isinstance(n, int | str), change)


def extra_key(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Add a key (known elsewhere, misspelt, hostile) to a mapping."""

    def change(parent: Any, key: str | int, node: Any) -> str:
        name = rng.choice([rng.choice(FIELD_NAMES), hostile_text(rng)])
        node[name] = value(rng)
        return f"+ {name!r}"[:120]

    return _edit(rng, tree, lambda _p, n: isinstance(n, dict), change)


def nest(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Wrap a value in many lists or mappings."""

    def change(parent: Any, key: str | int, node: Any) -> str:
        depth = rng.choice([1, 2, 10, 63, 64, 65, 80, 200])
        for _ in range(depth):
            node = [node] if rng.random() < 0.5 else {"x": node}
        parent[key] = node
        return f"nested {depth} deep"

    return _edit(rng, tree, lambda _p, _n: True, change)


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

    mutated = _edit(rng, tree, lambda _p, n: isinstance(n, dict), change)
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


def collide(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Replace a string by another object's name spelled to normalise to the same."""
    known = names(tree)
    if not known:
        return None

    def change(parent: Any, key: str | int, _: Any) -> str:
        name = rng.choice(known)
        parent[key] = rng.choice([name, name.upper(), name.replace("-", "_"), f" {name} "])
        return f"-> {parent[key]!r}"

    return _edit(rng, tree, lambda _p, n: isinstance(n, str), change)


def rename(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Rename an object: only where it is defined (its references dangle), or everywhere
    (every file's text), to a spelling that may collide or be hostile."""
    known = names(tree)
    if not known:
        return None
    old = rng.choice(known)
    new = hostile_name(rng, old)
    if rng.random() < 0.5:
        pattern = re.compile(rb"(?<![\w.-])" + re.escape(old.encode()) + rb"(?![\w.-])")
        encoded = new.encode("utf-8", "surrogatepass")
        renamed = {path: pattern.sub(lambda _: encoded, content) for path, content in tree.items()}
        return renamed, f"renamed {old!r} to {new!r} everywhere"[:160]
    for file in sorted(tree):
        documents = load(tree[file])
        for index, document in enumerate(documents or []):
            meta = document.get("metadata") if isinstance(document, dict) else None
            if isinstance(meta, dict) and meta.get("name") == old:
                meta["name"] = new
                assert documents is not None
                return {**tree, file: dump(documents)}, (
                    f"{file}#{index} renamed {old!r} to {new!r} (references left)"[:160]
                )
    return None


def delete_document(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Delete one document of a file, or a whole file (its object's references dangle)."""
    picked = pick_file(rng, tree)
    if picked is None:
        return None
    file, documents = picked
    if len(documents) == 1 or rng.random() < 0.5:
        return {k: v for k, v in tree.items() if k != file}, f"{file} deleted"
    index = rng.randrange(len(documents))
    del documents[index]
    return {**tree, file: dump(documents)}, f"{file}#{index} deleted"


def duplicate_document(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Copy a document into its own file, another file or a new one (two objects of one
    name)."""
    picked = pick_file(rng, tree)
    if picked is None:
        return None
    file, documents = picked
    index = rng.randrange(len(documents))
    target = rng.choice([file, rng.choice(sorted(tree)), "copy.yaml", "teams/copy.yaml"])
    existing = (load(tree[target]) or []) if target in tree else []
    existing.append(copy.deepcopy(documents[index]))
    return {**tree, target: dump(existing)}, f"{file}#{index} copied into {target}"


def move_document(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Move a document out of its file into another or a new one (a team's file into
    grants/, a grant into teams/...)."""
    picked = pick_file(rng, tree)
    if picked is None:
        return None
    file, documents = picked
    index = rng.randrange(len(documents))
    moved = documents.pop(index)
    target = rng.choice([*sorted(tree), "moved.yaml", "grants/moved.yaml", "teams/moved.yaml"])
    if target == file:
        return None
    existing = (load(tree[target]) or []) if target in tree else []
    existing.insert(rng.randint(0, len(existing)), moved)
    mutated = {**tree, target: dump(existing)}
    if documents:
        mutated[file] = dump(documents)
    else:
        del mutated[file]
    return mutated, f"{file}#{index} moved into {target}"


STRUCTURAL: dict[str, Mutation] = {
    "delete-key": delete_key,
    "move-key": move_key,
    "duplicate-key": duplicate_key,
    "swap-type": swap_type,
    "extreme-number": extreme_number,
    "resize-list": resize_list,
    "dangling-reference": dangling_reference,
    "hostile-string": hostile_string,
    "free-text": free_text,
    "tweak": tweak,
    "demand": demand,
    "partition": partition,
    "taint": taint,
    "extra-key": extra_key,
    "nest": nest,
    "alias": alias,
    "merge-key": merge_key,
    "tag": tag,
    "collide": collide,
    "rename": rename,
    "delete-document": delete_document,
    "duplicate-document": duplicate_document,
    "move-document": move_document,
}
"""Every structural mutation, by the name a case's description and the summary use."""
