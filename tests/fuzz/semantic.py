"""Mutations that know the policy language: references, names, documents and files, and the
numbers and settings the solver decides on (demand, capacity, MIG, taints).

Each takes a random generator and a tree and returns the mutated tree with a one-line
description, or None where it does not apply.
"""

from __future__ import annotations

import copy
import random
import re
from typing import Any

from tests.fuzz.corpus import REFERENCE_KEYS
from tests.fuzz.documents import Mutated, Mutation, dump, load, names, pick_file
from tests.fuzz.seeds import PolicyTree
from tests.fuzz.structural import edit
from tests.fuzz.values import hostile_name


def dangling_reference(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Point a reference (tier, cluster, pool, priority, namespace, ...) at nothing."""

    def wanted(path: Any, _: Any) -> bool:
        return isinstance(path[-1], str) and path[-1] in REFERENCE_KEYS

    def change(parent: Any, key: str | int, node: Any) -> str:
        ghost = rng.choice(["ghost", "missing-object", "h100x", "c9", "Training", "default"])
        parent[key] = [ghost] if isinstance(node, list) else ghost
        return f"-> {ghost!r}"

    return edit(rng, tree, wanted, change)


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

    return edit(rng, tree, wanted, change)


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

    return edit(rng, tree, wanted, change)


def taint(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Taint a GPU of a pool found in the tree (a DeviceTaint document), or let a team
    tolerate a taint."""
    pools = _pools(tree)
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

    return edit(rng, tree, wanted, change)


def _pools(tree: PolicyTree) -> list[tuple[str, str, object, object]]:
    """(cluster, pool, nodes, GPUs per node) of every named pool of every named cluster."""
    found: list[tuple[str, str, object, object]] = []
    for content in tree.values():
        for document in load(content) or []:
            if not _is(document, "Cluster"):
                continue
            cluster, pools = document["metadata"].get("name"), document["spec"].get("nodePools")
            if not isinstance(cluster, str) or not isinstance(pools, list):
                continue
            found.extend(
                (cluster, pool["name"], pool.get("nodes", 1), pool.get("gpusPerNode", 1))
                for pool in pools
                if isinstance(pool, dict) and isinstance(pool.get("name"), str)
            )
    return found


def _is(document: Any, kind: str) -> bool:
    return (
        isinstance(document, dict)
        and document.get("kind") == kind
        and isinstance(document.get("metadata"), dict)
        and isinstance(document.get("spec"), dict)
    )


def collide(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Replace a string by another object's name spelled to normalise to the same."""
    known = names(tree)
    if not known:
        return None

    def change(parent: Any, key: str | int, _: Any) -> str:
        name = rng.choice(known)
        parent[key] = rng.choice([name, name.upper(), name.replace("-", "_"), f" {name} "])
        return f"-> {parent[key]!r}"

    return edit(rng, tree, lambda _p, n: isinstance(n, str), change)


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


SEMANTIC: dict[str, Mutation] = {
    "dangling-reference": dangling_reference,
    "demand": demand,
    "partition": partition,
    "taint": taint,
    "collide": collide,
    "rename": rename,
    "delete-document": delete_document,
    "duplicate-document": duplicate_document,
    "move-document": move_document,
}
"""Every mutation that knows the policy language, by the name the summary uses."""
