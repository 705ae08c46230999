"""Random edits that move whole policy documents between files, and fleet-wide documents
tests/random_fleets.py does not write: for the property tests of the compile cache
(tests/test_cache_inputs.py, tests/test_incremental_compile.py), where a document's origin and
index matter as much as its bytes."""

from __future__ import annotations

import random
from pathlib import Path

from benchmarks.generate import HEADER, LADDER

Before = dict[Path, str | None]
"""The files an edit touched, each with its text before (None: it did not exist)."""

FLEET_AND_LADDER = (
    HEADER
    + """kind: Fleet
metadata: {name: random}
spec:
  gitops: {repoURL: https://git.example.com/fleet.git, revision: main, path: out}
---
"""
    + LADDER
)
"""A Fleet and a priority ladder in one file (`fleet.yaml`): every cluster reads both."""


def write_fleet(root: Path, files: dict[str, str]) -> None:
    """Write a generated fleet's `files` (relative path -> text) below `root`, with
    FLEET_AND_LADDER as `fleet.yaml`."""
    for relative, text in {**files, "fleet.yaml": FLEET_AND_LADDER}.items():
        put(root / relative, text)


def move_documents(rng: random.Random, policies: Path) -> tuple[str, Before]:
    """Move whole documents about, which changes their origins and indexes but not their
    bytes: a file renamed, two files' texts swapped, a file's documents appended to
    another's, a file's last document split off into a file of its own, a file's documents
    reordered, or a file removed. What it did, and what it touched."""
    files = sorted(p.relative_to(policies).as_posix() for p in policies.rglob("*.yaml"))
    first, second = rng.sample(files, 2)
    one, other = policies / first, policies / second
    texts: Before = {one: one.read_text(), other: other.read_text()}
    documents = _documents(texts[one] or "")
    kind = rng.choice(("rename", "swap", "append", "split", "reorder", "remove"))
    if kind == "split" and len(documents) > 1:
        split = _unused(rng, one.parent, "split.yaml")
        put(one, "---\n".join(documents[:-1]))
        put(split, documents[-1])
        return f"split {first}'s last document off", {one: texts[one], split: None}
    if kind == "reorder" and len(documents) > 1:
        put(one, "---\n".join(documents[::-1]))
        return f"reordered {first}", {one: texts[one]}
    if kind == "swap":
        put(one, texts[other])
        put(other, texts[one])
        return f"swapped {first} and {second}", texts
    if kind == "append":
        put(other, "---\n".join([*_documents(texts[other] or ""), *documents]))
        put(one, None)
        return f"appended {first} to {second}", texts
    if kind == "remove":
        put(one, None)
        return f"removed {first}", {one: texts[one]}
    # a rename, or a split or reorder of a file of one document
    renamed = _unused(rng, policies / "moved", one.name)
    put(renamed, texts[one])
    put(one, None)
    return f"renamed {first} to moved/{renamed.name}", {one: texts[one], renamed: None}


def _unused(rng: random.Random, directory: Path, name: str) -> Path:
    """A path in `directory` that holds no file, its name ending in `name`."""
    while (path := directory / f"{rng.randrange(1000)}-{name}").exists():
        pass
    return path


def _documents(text: str) -> list[str]:
    """A policy file's documents, each ending with a line break."""
    return [part.strip("\n") + "\n" for part in text.split("\n---\n") if part.strip()]


def put(path: Path, text: str | None) -> None:
    """Write `text` to `path` (its directory made), or remove the file for None."""
    if text is None:
        path.unlink(missing_ok=True)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def undo(before: Before) -> None:
    """Put back the files an edit touched."""
    for path, text in before.items():
        put(path, text)
