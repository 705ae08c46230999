"""Old output trees go to the compile cache's trash (compiler.write.trash): a write through a
prestage sets them aside at once instead of waiting for their removal, the next prestage
removes them, and where the trash cannot take a tree it is removed as before."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from compiler.write import write_tree
from compiler.write.prestage import Prestage
from compiler.write.trash import Trash
from tests.test_prestage import inode, state, state_of, until

OLD = {"a/x.yaml": "one\n", "a/y.yaml": "two\n", "b/z.yaml": "three\n"}
NEW = {"a/x.yaml": "one\n", "a/y.yaml": "changed\n"}


def _write_through_prestage(out: Path, tree: dict[str, str], trash: Trash | None) -> None:
    """Write `tree` over `out` as a compile does: carried over by a prestage first."""
    prestage = Prestage.start(out, trash)
    assert prestage is not None
    try:
        write_tree(out, tree, prestage)
    finally:
        prestage.discard()


def test_the_old_tree_goes_to_the_trash_and_the_next_compile_empties_it(
    tmp_path: Path,
) -> None:
    out, trash = tmp_path / "out", Trash(tmp_path / "cache" / "trash")
    write_tree(out, OLD)
    kept = inode(out / "a" / "x.yaml")
    _write_through_prestage(out, NEW, trash)
    assert state(out) == state_of(NEW)
    assert inode(out / "a" / "x.yaml") == kept  # an unchanged file is the same file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "out"]  # nothing beside out/
    (old,) = trash.directory.iterdir()
    assert state(old) == state_of(OLD)  # the old tree, whole
    _write_through_prestage(out, OLD, trash)
    (older,) = trash.directory.iterdir()  # the next compile's prestage removed the first
    assert older != old and state(older) == state_of(NEW)
    assert state(out) == state_of(OLD)


def test_a_carried_copy_that_nothing_changed_in_goes_to_the_trash(tmp_path: Path) -> None:
    out, trash = tmp_path / "out", Trash(tmp_path / "cache" / "trash")
    write_tree(out, OLD)
    before = state(out)
    _write_through_prestage(out, OLD, trash)
    assert state(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "out"]
    assert len(list(trash.directory.iterdir())) == 1


@pytest.mark.parametrize(
    "unusable",
    [
        lambda cache: cache.write_text("a file where the cache directory would be"),
        lambda cache: os.symlink("/proc/self/nowhere", cache),  # a dangling link
    ],
    ids=["not a directory", "a dangling link"],
)
def test_a_tree_the_trash_cannot_take_is_removed_as_before(
    tmp_path: Path, unusable: Callable[[Path], object]
) -> None:
    out, cache = tmp_path / "out", tmp_path / "cache"
    unusable(cache)
    write_tree(out, OLD)
    prestage = Prestage.start(out, Trash(cache / "trash"))
    assert prestage is not None
    write_tree(out, NEW, prestage)
    until(lambda: not prestage.staging.exists())  # the process removed the old tree
    prestage.discard()
    assert state(out) == state_of(NEW)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "out"]


def test_another_file_system_is_no_trash(tmp_path: Path) -> None:
    """A rename cannot cross file systems: the tree stays where it was, for the caller."""
    elsewhere = Path("/dev/shm")
    if not os.access(elsewhere, os.W_OK) or os.stat(elsewhere).st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("no second writable file system here")
    trash = Trash(elsewhere / f"gpufleet-test-trash-{os.getpid()}")
    tree = tmp_path / "tree"
    (tree / "a").mkdir(parents=True)
    (tree / "a" / "x.yaml").write_text("x\n")
    try:
        assert not trash.put(tree)
        assert (tree / "a" / "x.yaml").read_text() == "x\n"
    finally:
        trash.empty()
        if trash.directory.exists():
            trash.directory.rmdir()
