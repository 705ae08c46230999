"""Carrying out/ into staging while the compile runs (compiler.write.prestage) writes exactly
what staging from nothing writes: the same files, bytes, links and directories, the same
changes reported, the same refusals, with unchanged files keeping their inode; and the
process that carries it never leaves anything behind."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler.cli import main
from compiler.diagnostics import CompileError
from compiler.write import OWNED_LIST, OutputConflict, write_tree
from compiler.write.atomic import beside
from compiler.write.prestage import Prestage, carry_over
from tests.conftest import EXAMPLE

PATHS = ["a", "a/c", "a/c/x.yaml", "a/y.yaml", "b/x.yaml", "b/z.yaml", "report.md"]
"""Few names, some a file in one tree and a directory in another."""

TEXTS = ["one\n", "two\n", "three: 3\n"]


def is_tree(paths: set[str]) -> bool:
    """Whether no path is also a directory of another."""
    return not any(other.startswith(path + "/") for path in paths for other in paths)


trees = st.dictionaries(st.sampled_from(PATHS), st.sampled_from(TEXTS), max_size=5).filter(
    lambda tree: is_tree(set(tree))
)


def state(root: Path) -> dict[str, object]:
    """Every entry below `root`: a file's bytes, a link's target, a directory's mark."""
    found: dict[str, object] = {}
    for path in sorted(root.rglob("*")):
        name = path.relative_to(root).as_posix()
        if path.is_symlink():
            found[name] = ("link", os.readlink(path))
        elif path.is_dir():
            found[name] = "directory"
        else:
            found[name] = path.read_bytes()
    return found


def inode(path: Path) -> int:
    return path.lstat().st_ino


def prepare(out: Path, old: dict[str, str], user: dict[str, str], linked: str | None) -> None:
    """out/ as a compile of `old` left it, then the user's files and a link put there (an
    owned file of `old` replaced by a link, when `linked` names one)."""
    write_tree(out, old)
    for path, text in user.items():
        target = out / path
        if not any(parent.is_file() for parent in target.parents) and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
    (out / "empty").mkdir(exist_ok=True)
    (out / "b").mkdir(exist_ok=True)
    if not (out / "b" / "link").exists():
        (out / "b" / "link").symlink_to("../elsewhere")
    if linked is not None and (out / linked).is_file():
        (out / linked).unlink()
        (out / linked).symlink_to("somewhere")


def outcome(out: Path, new: dict[str, str], prestaged: bool) -> tuple[object, dict[str, object]]:
    """What writing `new` over `out` says (or raises) and leaves: out/ and what is beside it."""
    try:
        if prestaged:
            changes: object = write_tree(out, new, carry_over(out, beside(out, "staging")))
        else:
            changes = write_tree(out, new)
    except (OutputConflict, CompileError, OSError) as error:
        changes = type(error).__name__
    beside_out = sorted(p.name for p in out.parent.iterdir() if p.name != out.name)
    return changes, {"out": state(out), "beside": beside_out}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    old=trees,
    new=trees,
    user=st.dictionaries(st.sampled_from([*PATHS, "u.txt", "a/u.txt"]), st.sampled_from(TEXTS)),
    linked=st.none() | st.sampled_from(PATHS),
)
def test_a_prestaged_write_is_a_write(
    tmp_path_factory: pytest.TempPathFactory,
    old: dict[str, str],
    new: dict[str, str],
    user: dict[str, str],
    linked: str | None,
) -> None:
    root = tmp_path_factory.mktemp("prestage")
    (root / "plain").mkdir()
    (root / "staged").mkdir()
    plain, staged = root / "plain" / "out", root / "staged" / "out"
    prepare(plain, old, user, linked)
    shutil.copytree(plain, staged, symlinks=True)
    kept = {p for p in new if p in old and new[p] == old[p] and (staged / p).is_file()}
    before = {p: inode(staged / p) for p in kept if not (staged / p).is_symlink()}
    expected = outcome(plain, new, prestaged=False)
    assert outcome(staged, new, prestaged=True) == expected
    if isinstance(expected[0], str):
        return
    # an unchanged file of gpufleet's is the same file, not a copy
    assert {p: inode(staged / p) for p in before} == before


def test_the_process_carries_out_over_and_removes_the_old_tree(tmp_path: Path) -> None:
    out = tmp_path / "out"
    old = {"a/x.yaml": "one\n", "a/y.yaml": "two\n", "b/z.yaml": "three\n"}
    write_tree(out, old)
    kept = inode(out / "a" / "x.yaml")
    prestage = Prestage.start(out)
    assert prestage is not None
    staged = prestage.staged()
    assert staged == carry_over_elsewhere(out, tmp_path / "elsewhere")
    new = {**old, "a/y.yaml": "changed\n"}
    del new["b/z.yaml"]
    changes = write_tree(out, new, staged, prestage.dispose)
    assert (sorted(changes.changed), changes.removed) == ([OWNED_LIST, "a/y.yaml"], ["b/z.yaml"])
    prestage.discard()  # waits for the process to remove the old tree
    assert state(out) == state_of(new)
    assert inode(out / "a" / "x.yaml") == kept
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere", "out"]


def carry_over_elsewhere(out: Path, elsewhere: Path) -> object:
    """What carry_over finds in `out`, carried into another directory (then removed)."""
    try:
        return carry_over(out, elsewhere)
    finally:
        shutil.rmtree(elsewhere)
        elsewhere.mkdir()


def state_of(tree: dict[str, str]) -> dict[str, object]:
    """What out/ holds after writing `tree` into it (the listing of owned files included)."""
    found: dict[str, object] = {OWNED_LIST: None}
    for path, text in tree.items():
        parts = path.split("/")
        for end in range(1, len(parts)):
            found["/".join(parts[:end])] = "directory"
        found[path] = text.encode()
    listing = "# Files written by gpufleet; it prunes only these.\n" + "".join(
        f"{p}\n" for p in sorted(tree)
    )
    found[OWNED_LIST] = listing.encode()
    return dict(sorted(found.items()))


def test_a_prestage_never_used_is_stopped_and_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_tree(out, {f"d{n}/f{i}.yaml": "x\n" for n in range(20) for i in range(50)})
    before = state(out)
    prestage = Prestage.start(out)
    assert prestage is not None
    prestage.discard()  # at once, carried or not (a compile that failed)
    assert state(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_a_prestage_that_fails_is_none_and_the_write_stages_from_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    write_tree(out, {"a.yaml": "one\n"})

    def fails(out: Path, staging: Path) -> None:
        staging.mkdir()
        (staging / "half").write_text("left by a failed carry\n")
        raise OSError("no")

    monkeypatch.setattr("compiler.write.prestage.carry_over", fails)
    prestage = Prestage.start(out)
    assert prestage is not None
    assert prestage.staged() is None
    write_tree(out, {"a.yaml": "two\n"}, None, prestage.dispose)
    prestage.discard()
    assert state(out) == state_of({"a.yaml": "two\n"})
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_no_prestage_without_an_out_directory_or_with_one_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert Prestage.start(tmp_path / "out") is None
    (tmp_path / "out").mkdir()
    monkeypatch.setenv("GPUFLEET_WORKERS", "1")
    assert Prestage.start(tmp_path / "out") is None


def test_compile_over_its_own_output_keeps_unchanged_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command uses the prestage: a second compile after an edit relinks what did not
    change, rewrites what did, and leaves nothing beside out/ but its lock."""
    monkeypatch.setenv("GPUFLEET_NO_CACHE", "1")

    def from_nothing(*args: object) -> None:
        raise AssertionError("staged from nothing: the prestage was not used")

    policies, out = tmp_path / "policies", tmp_path / "out"
    shutil.copytree(EXAMPLE, policies)
    arguments = ["compile", "--policies", str(policies), "--out", str(out)]
    assert main(arguments) == 0
    files = {p.relative_to(out).as_posix(): inode(p) for p in out.rglob("*") if p.is_file()}
    grant = policies / "grants" / "vision.yaml"
    grant.write_text(grant.read_text().replace("guaranteed: 16", "guaranteed: 8"))
    monkeypatch.setattr("compiler.write.writer._stage", from_nothing)
    assert main(arguments) == 0
    after = {p.relative_to(out).as_posix(): inode(p) for p in out.rglob("*") if p.is_file()}
    assert set(after) == set(files)
    same = {p for p in after if after[p] == files[p]}
    assert "report.md" not in same and len(same) > len(after) // 2
    assert sorted(p.name for p in tmp_path.iterdir()) == [".out.lock", "out", "policies"]
