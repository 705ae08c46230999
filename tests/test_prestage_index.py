"""out/'s index across compiles (compiler.write.prestage with compiler.cache.file_index): a
compile's prestage reads only the files of out/ written since the last compile, and renews
the index with each file it carried that no one has written since; what a later prestage or
check then finds is what reading every file finds, whatever was done to out/ in between."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import compiler.cache.settled as settled
from compiler.cache.file_index import OUT_INDEX, FileIndex
from compiler.cache.settled import Settled, file_stat
from compiler.cache.store import out_digest
from compiler.file_bytes import FileDigest, bytes_digest
from compiler.write import OWNED_LIST, write_tree
from compiler.write import prestage as prestage_module
from compiler.write.atomic import remove
from compiler.write.prestage import MAX_DIGESTED, Prestage, carry_over, snapshot
from compiler.write.trash import Trash
from tests.out_trees import EDITS, FILE, TICK, read_in_full
from tests.test_prestage import until

TREE = {
    f"clusters/c{index % 2}/file-{index}.yaml": f"kind: Thing\nindex: {index}\n"
    for index in range(6)
}
"""What the compiles below write (FILE among them)."""

OTHER = "clusters/c0/file-0.yaml"
"""A file of TREE that the second compile changes (and so writes anew)."""


@pytest.fixture(autouse=True)
def _a_tick_is_old_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    """A file a tick old may be kept wherever the suite runs, by the system clock too (where
    there is no O_TMPFILE, RACY_NS would wait two seconds); the forked prestage inherits it."""
    monkeypatch.setattr(settled, "RACY_NS", 0)


def _compile(out: Path, tree: dict[str, str], cache: Path) -> None:
    """Write `tree` over `out` as a compile with the cache does: carried over by a prestage
    that reads out/'s index and renews it. A tick passes between the carry and the write, as
    in a compile (the files just carried would else all be too recent to keep)."""
    prestage = Prestage.start(out, Trash(cache / "trash"), cache)
    assert prestage is not None
    try:
        carried = [prestage.staging / path for path in (*TREE, OWNED_LIST)]
        until(lambda: all(path.exists() for path in carried))
        time.sleep(TICK)
        write_tree(out, tree, prestage)
    finally:
        prestage.discard()


def _compiled_twice(tmp_path: Path) -> tuple[Path, Path]:
    """out/ and the cache after a compile of TREE, then one that changed OTHER."""
    out, cache = tmp_path / "out", tmp_path / "cache"
    cache.mkdir()  # where the file system's clock is read
    write_tree(out, TREE)
    time.sleep(TICK)
    _compile(out, {**TREE, OTHER: "kind: Thing\nindex: changed\n"}, cache)
    return out, cache


def _digests(out: Path) -> dict[str, FileDigest]:
    """The digest of every regular file below `out`, each read."""
    return {
        path.relative_to(out).as_posix(): bytes_digest(path.read_bytes())
        for path in out.rglob("*")
        if path.is_file() and not path.is_symlink()
    }


def _carried(out: Path, cache: Path) -> dict[str, FileDigest]:
    """The digests a prestage takes of `out` with its index (carried into a directory
    removed after)."""
    staging = out.with_name("carried")
    try:
        return dict(carry_over(out, staging, index=FileIndex.open(cache, out, OUT_INDEX)).digests)
    finally:
        remove(staging)


def _counted_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files a prestage in this process reads from now on (their real paths)."""
    reads: list[str] = []
    read_open = prestage_module.read_open

    def counted(descriptor: int, limit: int, size: int) -> bytes:
        reads.append(os.readlink(f"/proc/self/fd/{descriptor}"))
        return read_open(descriptor, limit, size)

    monkeypatch.setattr(prestage_module, "read_open", counted)
    return reads


def _renew(index: FileIndex, out: Path, carrier: prestage_module._Carrier) -> None:
    """Save out/'s index as a prestage renews it (with the lstats of a walk after a stamp)."""
    now = Settled.now(index.directory)
    index.save_as(out, index.relinked(carrier.digests, carrier.found, snapshot(out), now))


def test_a_compile_keeps_in_the_index_each_file_it_carried_unchanged(tmp_path: Path) -> None:
    out, cache = _compiled_twice(tmp_path)
    known = FileIndex.open(cache, out, OUT_INDEX).known
    actual = _digests(out)
    assert set(known) >= set(TREE) - {OTHER} | {OWNED_LIST}
    for path, (found, digest) in known.items():
        if found == file_stat((out / path).lstat()):  # the entry stands for the file: true
            assert digest == actual[path]
        else:  # the one written anew, kept as it was read: it stands for nothing
            assert path == OTHER


def test_the_next_prestage_reads_only_what_the_last_compile_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, cache = _compiled_twice(tmp_path)
    time.sleep(TICK)
    reads = _counted_reads(monkeypatch)
    assert _carried(out, cache) == _digests(out)
    assert reads == [os.path.realpath(out / OTHER)]


@pytest.mark.parametrize("edit", EDITS.values(), ids=EDITS.keys())
def test_an_edit_of_out_after_a_compile_is_seen_by_the_next_prestage_and_check(
    tmp_path: Path, edit: Callable[[Path], object]
) -> None:
    out, cache = _compiled_twice(tmp_path)
    assert FILE in FileIndex.open(cache, out, OUT_INDEX).known  # else nothing is tested
    time.sleep(TICK)
    edit(out)
    assert _carried(out, cache) == _digests(out)
    assert out_digest(out, FileIndex.open(cache, out, OUT_INDEX)) == read_in_full(out)


def _write_in_place(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[0] ^= 0x01
    path.write_bytes(bytes(data))


WRITES: dict[str, Callable[[Path], object]] = {
    "written in place, same size": _write_in_place,
    "chmodded": lambda path: path.chmod(0o600),
    "removed": lambda path: path.unlink(),
}


@pytest.mark.parametrize("write", WRITES.values(), ids=WRITES.keys())
def test_a_file_written_after_the_prestage_read_it_is_not_kept(
    tmp_path: Path, write: Callable[[Path], object]
) -> None:
    """Between the read and the renewal only carrying a file may change it: one written, or
    chmodded, or gone since is not kept (its change time cannot tell: carrying moves it)."""
    out, cache = tmp_path / "out", tmp_path / "cache"
    cache.mkdir()  # where the file system's clock is read
    write_tree(out, TREE)
    time.sleep(TICK)
    index = FileIndex.open(cache, out, OUT_INDEX)
    carrier = prestage_module._carry(out, tmp_path / "staging", MAX_DIGESTED, index)
    time.sleep(TICK)  # a write now has a modification time of its own
    write(out / FILE)
    time.sleep(TICK)
    _renew(index, out, carrier)
    kept = FileIndex.open(cache, out, OUT_INDEX).known
    assert set(kept) == set(TREE) - {FILE} | {OWNED_LIST}


def test_a_file_changed_after_the_run_started_is_not_kept(tmp_path: Path) -> None:
    """A file read that changed after the prestage started could change again within the
    same tick and keep every time it had: it is read again by the next run."""
    out, cache = tmp_path / "out", tmp_path / "cache"
    cache.mkdir()  # where the file system's clock is read
    write_tree(out, TREE)
    time.sleep(TICK)
    index = FileIndex.open(cache, out, OUT_INDEX)
    if index.settled.device is None:  # the system clock's start may be a tick ahead
        pytest.skip("no O_TMPFILE here: the file system's clock cannot be read")
    _write_in_place(out / FILE)  # after the start (FileIndex.open)
    carrier = prestage_module._carry(out, tmp_path / "staging", MAX_DIGESTED, index)
    time.sleep(TICK)
    _renew(index, out, carrier)
    kept = FileIndex.open(cache, out, OUT_INDEX).known
    assert set(kept) == set(TREE) - {FILE} | {OWNED_LIST}
