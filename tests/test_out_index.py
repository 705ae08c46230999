"""The index of out/ (compiler.cache.file_index): a check reads only the files changed since the
last one, and its verdict is the one reading every file gives."""

from __future__ import annotations

import os
import pickle
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import compiler.cache.settled as settled
from compiler.cache.file_index import OUT_INDEX, FileIndex
from compiler.cache.settled import Settled
from compiler.cache.store import out_digest
from tests.out_trees import (
    EDITS,
    FILE,
    FILES,
    TICK,
    counted_reads,
    read_in_full,
    replace,
    same_size_and_mtime,
    tree,
)


def _indexed(cache: Path, out: Path) -> str | None:
    """out/'s digest as a check takes it: with the index, which it then saves."""
    index = FileIndex.open(cache, out, OUT_INDEX)
    digest = out_digest(out, index)
    index.save()
    return digest


def _reads_every_file(cache: Path, out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The next check reads every file of out/ and gives the digest of reading them all."""
    expected = read_in_full(out)
    reads = counted_reads(monkeypatch)
    assert _indexed(cache, out) == expected
    assert len(reads) == FILES


def _primed(cache: Path, out: Path) -> str | None:
    """out/'s digest after the two checks that make an index of its files (the first keeps
    the directory's identity only), a tick after its files were written."""
    _indexed(cache, out)
    time.sleep(TICK)
    digest = _indexed(cache, out)
    assert len(FileIndex.open(cache, out, OUT_INDEX).known) == len(list(out.rglob("*.yaml")))
    return digest


@pytest.mark.parametrize("edit", EDITS.values(), ids=EDITS.keys())
def test_a_file_changed_since_the_index_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: Callable[[Path], object]
) -> None:
    monkeypatch.setattr(settled, "RACY_NS", 0)  # keep files however recently written
    out, cache = tree(tmp_path), tmp_path / "cache"
    _primed(cache, out)
    time.sleep(TICK)
    edit(out)
    assert _indexed(cache, out) == read_in_full(out)  # what reading every file gives


def test_an_edit_that_keeps_size_and_mtime_changes_the_digest(tmp_path: Path) -> None:
    """The edits above are real: the digest of every file read differs after them."""
    out = tree(tmp_path)
    before = read_in_full(out)
    EDITS["edited in place, size and mtime kept"](out)
    assert read_in_full(out) != before


def test_an_unchanged_out_is_not_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settled, "RACY_NS", 0)
    out, cache = tree(tmp_path), tmp_path / "cache"
    first = _primed(cache, out)
    assert first == read_in_full(out)
    reads = counted_reads(monkeypatch)
    assert _indexed(cache, out) == first
    assert reads == []


def test_an_unchanged_out_is_kept_whole_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When every file is one the index kept, with the same lstat, a check keeps them all by
    one comparison, with no lookup per file, and leaves the index as it was: the next check
    does the same."""
    monkeypatch.setattr(settled, "RACY_NS", 0)
    out, cache = tree(tmp_path), tmp_path / "cache"
    first = _primed(cache, out)
    (saved,) = cache.glob("*.outindex")
    before = saved.read_bytes()
    looked_up: list[str] = []
    read = FileIndex.read

    def counted(self: FileIndex, root: Path, path: str, *args: Any, **kwargs: Any) -> object:
        looked_up.append(path)
        return read(self, root, path, *args, **kwargs)

    monkeypatch.setattr(FileIndex, "read", counted)
    for _ in range(2):
        index = FileIndex.open(cache, out, OUT_INDEX)
        assert out_digest(out, index) == first
        assert index.kept is None and looked_up == []
        index.save()
        assert saved.read_bytes() == before


def test_files_changed_before_a_check_are_kept_by_it(tmp_path: Path) -> None:
    """By the file system's own clock (compiler.cache.settled), a file written just before a
    check is kept by it: a check right after a compile does not wait RACY_NS to keep out/."""
    out, cache = tree(tmp_path), tmp_path / "cache"
    cache.mkdir()
    if Settled.now(cache).device is None:
        pytest.skip("no O_TMPFILE here: the file system's clock cannot be read")
    time.sleep(TICK)  # the next tick of the file system's clock
    _indexed(cache, out)
    _indexed(cache, out)
    assert len(FileIndex.open(cache, out, OUT_INDEX).known) == FILES


def test_a_file_is_kept_only_when_stamped_before_the_check_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file replaced just before a check starts is kept exactly when its file system
    stamped it before the check's start. The system clock does not decide (a file system's
    stamps lag it by up to a tick), and neither does a stamp equal to the start's: a change
    made after the start could have that stamp too, and keep every time the file had."""
    monkeypatch.setattr(settled, "RACY_NS", 0)  # the system clock alone would keep them all
    out, cache = tree(tmp_path), tmp_path / "cache"
    _primed(cache, out)
    if FileIndex.open(cache, out, OUT_INDEX).settled.device is None:
        pytest.skip("no O_TMPFILE here: the file system's clock cannot be read")
    for round_ in range(20):
        replace(out / FILE, f"kind: Replaced\nround: {round_}\n".encode())
        index = FileIndex.open(cache, out, OUT_INDEX)
        assert out_digest(out, index) == read_in_full(out)
        stamped_before = (out / FILE).stat().st_ctime_ns < index.settled.stamp
        assert (FILE in index.kept) == stamped_before
        assert len(index.kept) == FILES - 1 + stamped_before


def test_without_the_file_systems_clock_recent_changes_wait_racy_ns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the file system's clock cannot be read, files changed within RACY_NS of a check
    are read by every check until they are older."""
    monkeypatch.delattr(os, "O_TMPFILE", raising=False)
    out, cache = tree(tmp_path), tmp_path / "cache"
    _indexed(cache, out)
    _indexed(cache, out)
    assert FileIndex.open(cache, out, OUT_INDEX).known == {}
    _reads_every_file(cache, out, monkeypatch)


def test_a_stamp_bounds_only_files_on_its_own_file_system() -> None:
    """A file on another device is held to the system clock (less RACY_NS), not the stamp."""
    start = Settled(system=1_000, device=7, stamp=5_000)
    assert start((7, 1, 0o100644, 1, 0, 4_999)) and not start((7, 1, 0o100644, 1, 0, 5_000))
    assert not start((8, 1, 0o100644, 1, 0, 4_999)) and start((8, 1, 0o100644, 1, 0, 999))


def test_the_first_check_of_a_directory_keeps_only_its_identity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What CI checks once (a fresh checkout) costs no index of its files; the next check of
    the same directory keeps them."""
    monkeypatch.setattr(settled, "RACY_NS", 0)
    out, cache = tree(tmp_path), tmp_path / "cache"
    _indexed(cache, out)
    assert FileIndex.open(cache, out, OUT_INDEX).known == {}
    time.sleep(TICK)  # the files are a tick old: the next check may keep them
    reads = counted_reads(monkeypatch)
    _indexed(cache, out)
    assert len(reads) == FILES and len(FileIndex.open(cache, out, OUT_INDEX).known) == FILES


def test_an_index_is_of_one_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another directory at out/'s path is read whole, even holding the very same files."""
    monkeypatch.setattr(settled, "RACY_NS", 0)
    out, cache = tree(tmp_path), tmp_path / "cache"
    digest = _primed(cache, out)
    out.rename(tmp_path / "old")
    out.mkdir()
    (tmp_path / "old" / "clusters").rename(out / "clusters")  # the files keep their inodes
    assert read_in_full(out) == digest
    _reads_every_file(cache, out, monkeypatch)


def _one_stat_short(saved: Path) -> None:
    format_, identity, (paths, stats, sizes, hashes) = pickle.loads(saved.read_bytes())
    saved.write_bytes(pickle.dumps((format_, identity, (paths, stats[:-8], sizes, hashes))))


DAMAGES: dict[str, Callable[[Path], object]] = {
    "not a pickle": lambda saved: saved.write_bytes(b"not a pickle"),
    "one stat fewer than paths": _one_stat_short,
}


@pytest.mark.parametrize("damage", DAMAGES.values(), ids=DAMAGES.keys())
def test_an_unreadable_index_is_an_empty_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: Callable[[Path], object]
) -> None:
    monkeypatch.setattr(settled, "RACY_NS", 0)
    out, cache = tree(tmp_path), tmp_path / "cache"
    _primed(cache, out)
    (saved,) = cache.glob("*.outindex")
    damage(saved)
    assert FileIndex.open(cache, out, OUT_INDEX).known == {}
    _reads_every_file(cache, out, monkeypatch)


def test_a_check_from_the_record_sees_an_edit_that_keeps_size_and_mtime(
    example_repo: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    run_cli: Callable[..., tuple[int, str, str]],
    compiles: list[int],
) -> None:
    """The whole path: a check answered from the record keeps out/'s index, and a later edit
    of out/ that leaves its size and modification time makes the next check compile."""
    monkeypatch.setattr(settled, "RACY_NS", 0)
    monkeypatch.delenv("GPUFLEET_NO_CACHE")
    monkeypatch.setenv("GPUFLEET_CACHE", str(tmp_path / "cache"))
    assert run_cli("compile", "--check")[0] == 0  # compiles and records
    for _ in range(2):  # out/'s identity, then its files
        assert run_cli("compile", "--check")[0] == 0
    assert len(compiles) == 1
    assert FileIndex.open(tmp_path / "cache", example_repo / "out", OUT_INDEX).known
    time.sleep(TICK)
    same_size_and_mtime(example_repo / "out" / "report.md", lambda p, d: p.write_bytes(d))
    answer = run_cli("compile", "--check")
    assert len(compiles) == 2, "an edit of out/ was answered from the record"
    assert answer[0] == 1
    assert answer == run_cli("compile", "--check", "--no-cache")
