"""The names of clusters' inputs (compiler.cache.inputs): a cluster whose name is unchanged has
the same resolved inputs, and an edit renames only the clusters it can reach."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from compiler.cache.clusters import INPUTS, ClusterCache
from compiler.cache.fingerprint import fingerprint
from compiler.cache.inputs import _hash, input_names
from compiler.cache.key import CompileOptions
from compiler.cache.parsed import ParsedFileCache
from compiler.cache.reuse import Reuse
from compiler.catalog import load_catalog
from compiler.diagnostics import CompileError
from compiler.ir import ResolvedFleet
from compiler.load import load_policies
from compiler.model import Policies, build_policies
from compiler.policy_files import FileRead, PolicySnapshot, read_policy_files
from compiler.resolve import resolve
from tests.policy_edits import Before, move_documents, put, undo, write_fleet
from tests.random_fleets import fleet

SEEDS = (6, 10, 19, 33, 37, 53, 56)
"""Seeds whose generated fleet has two clusters and is feasible (as in
tests/test_incremental_compile.py)."""
STEPS = 25
NUMBER = re.compile(r"(?<=: )[0-9]+\b")
CLUSTER_LIST = re.compile(r"clusters: \[([^\]]*)\]")


def _resolved(policies: Path) -> tuple[Policies, ResolvedFleet, dict[str, str]]:
    """The policies as a compile with the cache loads and resolves them, and the names."""
    snapshot = read_policy_files(policies)
    model = build_policies(load_policies(policies, [], None, snapshot))
    resolved = resolve(model, load_catalog())
    return model, resolved, input_names(model, resolved, snapshot.digests, "code")


def _inputs(policies: Path) -> dict[str, tuple[str, str]] | None:
    """Each cluster's name and the fingerprint of its resolved inputs; None if it does not
    resolve."""
    try:
        _, resolved, names = _resolved(policies)
    except CompileError:
        return None
    return {
        c.name: (names[c.name], fingerprint(c, resolved.ladder, resolved.fleet))
        for c in resolved.clusters
    }


def _edit(rng: random.Random, policies: Path, earlier: dict[str, str]) -> tuple[str, Before]:
    """One random edit of the policy directory, and what it touched: a number moved, a
    comment added, a grant's cluster list narrowed or widened, a file put back as it was
    before its last edit (`earlier`: each edited file's text then), or whole documents moved
    about (tests.policy_edits.move_documents)."""
    kind = rng.choice(("number", "number", "number", "comment", "clusters", "restore", "documents"))
    if kind == "restore" and earlier:
        relative = rng.choice(sorted(earlier))
        path = policies / relative
        before: Before = {path: path.read_text() if path.exists() else None}
        put(path, earlier.pop(relative))
        return f"restored {relative}", before
    if kind == "documents":
        return move_documents(rng, policies)
    files = sorted(p.relative_to(policies).as_posix() for p in policies.rglob("*.yaml"))
    relative = rng.choice(files)
    path = policies / relative
    text = earlier[relative] = path.read_text()
    lists = list(CLUSTER_LIST.finditer(text))
    if kind == "clusters" and lists:
        found = rng.choice(lists)
        names = [n.strip() for n in found[1].split(",") if n.strip()]
        every = sorted({*names, *(p.stem for p in (policies / "clusters").glob("*.yaml"))})
        chosen = [n for n in every if rng.random() < 0.5] or every[:1]
        path.write_text(f"{text[: found.start(1)]}{', '.join(chosen)}{text[found.end(1) :]}")
        return f"clusters [{', '.join(chosen)}] in {relative}", {path: text}
    if kind == "comment" or not (numbers := list(NUMBER.finditer(text))):
        path.write_text(f"# edited\n{text}")
        return f"commented {relative}", {path: text}
    found = rng.choice(numbers)
    value = max(0, int(found.group()) + rng.choice((-1, 1, 2)))
    path.write_text(f"{text[: found.start()]}{value}{text[found.end() :]}")
    return f"set {value} in {relative}", {path: text}


@pytest.mark.parametrize("seed", SEEDS)
def test_a_cluster_named_as_before_has_the_inputs_it_had(seed: int, tmp_path: Path) -> None:
    """After each random edit, every cluster whose name is one it had after an earlier step has
    the fingerprint it had then: a name never stands for two different resolved inputs."""
    policies = tmp_path / "policies"
    write_fleet(policies, fleet(seed))
    rng = random.Random(f"inputs-{seed}")
    seen: dict[str, str] = {}  # name -> fingerprint
    kept = renamed = 0
    done: list[str] = []
    earlier: dict[str, str] = {}
    found = _inputs(policies)
    for step in range(STEPS + 1):
        if step:
            what, before = _edit(rng, policies, earlier)
            if (found := _inputs(policies)) is None:  # the edit broke the fleet: undone
                undo(before)
                continue
            done.append(what)
        assert found is not None, f"seed {seed}: the generated fleet does not resolve"
        for cluster, (name, inputs) in found.items():
            if name in seen:
                kept += 1
                assert seen[name] == inputs, f"seed {seed}: {cluster} after {done}"
            else:
                renamed += 1
                seen[name] = inputs
    print(f"seed {seed}: {kept} names kept, {renamed} new, {len(done)} edits kept")
    assert kept and renamed, f"seed {seed}: the edits never kept or never changed a name"


def test_an_edit_renames_only_the_clusters_it_reaches(policy_copy: Path) -> None:
    """The example fleet: a team's grant or file in one cluster renames that cluster only; a
    grant that starts naming a cluster, and any fleet-wide document, rename it too."""

    def names() -> dict[str, str]:
        return _resolved(policy_copy)[2]

    def edited(relative: str, old: str, new: str) -> dict[str, str]:
        path = policy_copy / relative
        text = path.read_text()
        assert old in text, f"{relative} no longer holds {old!r}"
        path.write_text(text.replace(old, new, 1))
        return names()

    first = names()
    assert set(first) == {"prod-east", "prod-west"}
    after = edited("grants/gpu-ops.yaml", "limit: 8", "limit: 9")  # gpu-ops: prod-east only
    assert after["prod-east"] != first["prod-east"]
    assert after["prod-west"] == first["prod-west"]
    again = edited("teams/gpu-ops.yaml", "\n", "\n# edited\n")
    assert again["prod-east"] != after["prod-east"]
    assert again["prod-west"] == first["prod-west"]
    both = "clusters: [prod-east, prod-west]"
    widened = edited("grants/gpu-ops.yaml", "clusters: [prod-east]", both)
    assert widened["prod-west"] != first["prod-west"]
    tier = edited("tiers/general.yaml", "\n", "\n# edited\n")
    assert all(tier[c] != widened[c] for c in tier)


def test_no_names_when_a_file_was_loaded_from_other_bytes(policy_copy: Path) -> None:
    """Names are of the bytes the key was taken of: a file whose digest is not there (or
    not the one it was loaded from) gives no names at all, so nothing is read under one."""
    model, resolved, names = _resolved(policy_copy)
    assert names
    snapshot = read_policy_files(policy_copy)
    missing = dict(snapshot.digests)
    del missing["grants/gpu-ops.yaml"]
    assert input_names(model, resolved, missing, "code") == {}


def test_a_kept_fingerprint_is_read_instead_of_taken(
    policy_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first key of a named cluster takes the fingerprint and keeps it; the next compile
    reads it back; a kept file that is not a fingerprint is taken again."""
    _, resolved, names = _resolved(policy_copy)
    taken: list[int] = []
    real = fingerprint

    def counted(*values: object) -> str:
        taken.append(len(values))
        return real(*values)

    monkeypatch.setattr("compiler.cache.clusters.fingerprint", counted)
    directory = tmp_path / "clusters"

    def keys() -> list[str]:
        cache = ClusterCache(directory, CompileOptions(20.0, 10.0, False), "code").named(names)
        return [cache.key(c, resolved, None) for c in resolved.clusters]

    first = keys()
    inputs_taken = [n for n in taken if n == 3]  # (cluster, ladder, fleet)
    assert len(inputs_taken) == len(resolved.clusters)
    taken.clear()
    assert keys() == first
    assert [n for n in taken if n == 3] == []
    (directory / INPUTS / names["prod-east"]).write_bytes(b"not a fingerprint")
    taken.clear()
    assert keys() == first
    assert [n for n in taken if n == 3] == [3]
    unnamed = ClusterCache(directory, CompileOptions(20.0, 10.0, False), "code")
    assert [unnamed.key(c, resolved, None) for c in resolved.clusters] == first


@pytest.mark.parametrize("edited", [False, True])
def test_no_names_when_a_vouched_file_changed_before_it_was_read(
    edited: bool, policy_copy: Path, tmp_path: Path
) -> None:
    """A file the policy directory's index vouched for (known by its digest, not read) and
    edited before the loader read it to parse it: the compile loaded other bytes than its
    key and its names are of, so its clusters get no names (each is fingerprinted)."""
    read = read_policy_files(policy_copy)
    vouched = PolicySnapshot(
        read.files,
        read.others,
        {path: FileRead(r.real, None, r.digest) for path, r in read.contents.items()},
        dict(read.digests),
    )
    if edited:
        team = policy_copy / "teams" / "vision.yaml"
        text = team.read_text()
        assert "gang: 4" in text
        team.write_text(text.replace("gang: 4", "gang: 2"))
    model = build_policies(load_policies(policy_copy, [], None, vouched))
    resolved = resolve(model, load_catalog())
    options = CompileOptions(20.0, 10.0, False)
    reuse = Reuse(
        vouched,
        ParsedFileCache(tmp_path / "parsed", "code"),
        ClusterCache(tmp_path / "clusters", options, "code"),
    )
    names = reuse.clusters_of(model, resolved).names
    assert vouched.changed == edited
    assert set(names) == (set() if edited else {"prod-east", "prod-west"})


def test_two_lists_of_parts_never_hash_alike() -> None:
    """A name is a hash of parts (a document is `origin\\0index\\0digest`, a missing team
    file `-`) that no file name can make ambiguous: a missing file then a document differs
    from one document whose origin holds a separator of the parts' own."""
    digest = "ab" * 32
    assert _hash("-", f"p/x.yaml\0 1\0{digest}") != _hash(f"-\x1fp/x.yaml\0 1\0{digest}")
    assert len({_hash("ab", "c"), _hash("a", "bc"), _hash("abc")}) == 3
