"""The compile cache's key of resolved values (compiler.cache.fingerprint): what counts, what
does not, and that it is the same in every process that resolves the same policy."""

from __future__ import annotations

import enum
import os
import subprocess
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from pydantic import BaseModel, PrivateAttr

from compiler.cache.fingerprint import fingerprint
from compiler.diagnostics import Span
from compiler.load.document import SourceDocument

REPO = Path(__file__).resolve().parent.parent


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1


class Pair(NamedTuple):
    left: int
    right: int


class Spec(BaseModel):
    size: int
    name: str = ""
    _source: SourceDocument | None = PrivateAttr(default=None)


def _document(origin: str = "policies/a.yaml", index: int = 0, data: Any = None) -> SourceDocument:
    data = {"spec": {"size": 1}} if data is None else data
    return SourceDocument(origin, origin, index, data, {(): 1})


def _spec(size: int = 1, name: str = "a", origin: str = "policies/a.yaml") -> Spec:
    spec = Spec(size=size, name=name)
    spec._source = _document(origin)
    return spec


@dataclass(frozen=True)
class Leaf:
    name: str
    colour: Colour
    at: Span = field(default=Span("a.yaml", 1, 1))


@dataclass(frozen=True)
class OtherLeaf(Leaf):
    """The same fields as Leaf, another class."""


@dataclass(frozen=True)
class Root:
    leaves: tuple[Leaf, ...]
    table: dict[str, Any]
    tags: frozenset[str]
    spec: Spec
    document: SourceDocument
    numbers: list[float | None]


def _root() -> Root:
    return Root(
        leaves=(Leaf("x", Colour.RED), Leaf("y", Colour.BLUE)),
        table={"a": 1, "b": [True, None], "c": Pair(1, 2), "d": Level.LOW},
        tags=frozenset(f"tag-{n}" for n in range(16)),
        spec=_spec(),
        document=_document(),
        numbers=[0.5, None, 2.0],
    )


def test_positions_do_not_count() -> None:
    base = _root()
    moved = replace(
        base, leaves=(replace(base.leaves[0], at=Span("a.yaml", 9, 4)), *base.leaves[1:])
    )
    assert fingerprint(moved) == fingerprint(base)
    # the document's node positions are not part of it either
    document = base.document
    elsewhere = SourceDocument(document.file, document.origin, 0, document.data, {(): 7})
    assert fingerprint(replace(base, document=elsewhere)) == fingerprint(base)


def test_every_value_counts() -> None:
    """Each edit of one value, at every depth and of every kind, gives a digest of its own."""
    base = _root()
    leaves = base.leaves
    edits = {
        "a leaf's name": replace(base, leaves=(replace(leaves[0], name="z"), leaves[1])),
        "a leaf's enum member": replace(
            base, leaves=(replace(leaves[0], colour=Colour.BLUE), leaves[1])
        ),
        "a leaf's class": replace(base, leaves=(OtherLeaf("x", Colour.RED), leaves[1])),
        "the leaves' order": replace(base, leaves=leaves[::-1]),
        "a leaf fewer": replace(base, leaves=leaves[:1]),
        "a dict value": replace(base, table={**base.table, "a": 2}),
        "a dict value's type": replace(base, table={**base.table, "a": True}),
        "a dict key": replace(
            base, table={("z" if k == "a" else k): v for k, v in base.table.items()}
        ),
        "the dict's order": replace(base, table=dict(reversed(base.table.items()))),
        "a list in a dict": replace(base, table={**base.table, "b": [True, False]}),
        "a named tuple": replace(base, table={**base.table, "c": Pair(2, 1)}),
        "a set's member": replace(base, tags=base.tags - {"tag-0"} | {"tag-16"}),
        "a model's value": replace(base, spec=_spec(size=2)),
        "a model's default made explicit": replace(base, spec=_spec(name="")),
        "a model's document": replace(base, spec=_spec(origin="policies/b.yaml")),
        "a document's data": replace(base, document=_document(data={"spec": {"size": 2}})),
        "a document's origin": replace(base, document=_document(origin="policies/b.yaml")),
        "a document's index": replace(base, document=_document(index=1)),
        "a float": replace(base, numbers=[0.25, None, 2.0]),
        "None for a value": replace(base, numbers=[0.5, 0.0, 2.0]),
        "an int for a float": replace(base, numbers=[0.5, None, 2]),
    }
    digests = {what: fingerprint(value) for what, value in edits.items()}
    unchanged = [what for what, digest in digests.items() if digest == fingerprint(base)]
    assert not unchanged, f"these edits left the digest as it was: {unchanged}"
    assert len(set(digests.values())) == len(digests), "two different edits gave one digest"


def test_a_value_of_no_known_kind_is_refused_wherever_it_is() -> None:
    """A new kind of value in the IR must not silently fall out of the key."""
    unknown = object()
    for where in (
        unknown,
        [1, unknown],
        {"a": unknown},
        Root((), {"a": unknown}, frozenset(), _spec(), _document(), []),
    ):
        with pytest.raises(TypeError, match="no fingerprint for a object"):
            fingerprint(where)


def test_an_object_met_twice_is_one_value() -> None:
    """The IR shares objects (a team between its guarantees): meeting one again is written as
    a reference to it, which differs from two equal objects, and from one met once."""
    leaf = Leaf("x", Colour.RED)
    assert fingerprint((leaf, leaf)) == fingerprint((leaf, leaf))
    assert fingerprint((leaf, leaf)) != fingerprint((leaf, Leaf("x", Colour.RED)))
    assert fingerprint((leaf, leaf)) != fingerprint((leaf,))


SCRIPT = """
import sys
from pathlib import Path
from compiler.cache.fingerprint import fingerprint
from compiler.pipeline import resolve_policies
sys.path.insert(0, {tests!r})
from test_fingerprint import _root
fleet = resolve_policies(Path({policies!r}))
for cluster in fleet.clusters:
    print(cluster.name, fingerprint(cluster, fleet.ladder, fleet.fleet))
print("values", fingerprint(_root()))
"""


def test_the_same_policy_gives_the_same_keys_in_every_process() -> None:
    """Set iteration order (and every other str hash) changes with PYTHONHASHSEED from one
    process to the next; the keys of the example fleet's clusters must not."""
    script = SCRIPT.format(tests=str(REPO / "tests"), policies=str(REPO / "policies"))
    outputs = []
    for seed in ("1", "2"):
        environment = {**os.environ, "PYTHONHASHSEED": seed}
        run = subprocess.run(
            [sys.executable, "-c", script],
            cwd=REPO,
            env=environment,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 0, run.stderr
        outputs.append(run.stdout)
    assert outputs[0] == outputs[1]
    keys = [line.split()[1] for line in outputs[0].splitlines()]
    assert len(keys) >= 3 and len(set(keys)) == len(keys), "two clusters share a key"
