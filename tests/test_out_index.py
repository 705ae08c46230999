"""The index of out/ (compiler.cache.out_index): a check reads only the files changed since the
last one, and its verdict is the one reading every file gives."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import compiler.cache.out_index as out_index
from compiler.cache.out_index import OutIndex
from compiler.cache.store import out_digest
from tests.out_trees import FILES, counted_reads, read_in_full, tree

TICK = 0.05
"""Longer than a tick of any file system clock this suite runs on, so that a change made
after this sleep has a ctime of its own."""


def _indexed(cache: Path, out: Path) -> str | None:
    """out/'s digest as a check takes it: with the index, which it then saves."""
    index = OutIndex.open(cache, out)
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
    the directory's identity only)."""
    _indexed(cache, out)
    digest = _indexed(cache, out)
    assert len(OutIndex.open(cache, out).known) == len(list(out.rglob("*.yaml")))
    return digest


def _same_size_and_mtime(path: Path, write: Callable[[Path, bytes], object]) -> None:
    """Flip a byte of `path` by `write`, then give it back its modification time."""
    before = path.stat()
    data = bytearray(path.read_bytes())
    data[0] ^= 0x01
    write(path, bytes(data))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns), follow_symlinks=False)


def _replace(path: Path, data: bytes) -> None:
    temporary = path.with_name(path.name + ".new")
    temporary.write_bytes(data)
    temporary.replace(path)


FILE = "clusters/c1/file-3.yaml"
EDITS: dict[str, Callable[[Path], object]] = {
    "edited in place, size and mtime kept": lambda out: _same_size_and_mtime(
        out / FILE, lambda path, data: path.write_bytes(data)
    ),
    "replaced, size and mtime kept": lambda out: _same_size_and_mtime(out / FILE, _replace),
    "chmodded": lambda out: (out / FILE).chmod(0o600),
    "removed": lambda out: (out / FILE).unlink(),
    "added": lambda out: (out / "clusters/c1/new.yaml").write_text("kind: New\n"),
    "a symlink now": lambda out: ((out / FILE).unlink(), (out / FILE).symlink_to("file-1.yaml")),
}


@pytest.mark.parametrize("edit", EDITS.values(), ids=EDITS.keys())
def test_a_file_changed_since_the_index_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: Callable[[Path], object]
) -> None:
    monkeypatch.setattr(out_index, "RACY_NS", 0)  # keep files however recently written
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
    monkeypatch.setattr(out_index, "RACY_NS", 0)
    out, cache = tree(tmp_path), tmp_path / "cache"
    first = _primed(cache, out)
    assert first == read_in_full(out)
    reads = counted_reads(monkeypatch)
    assert _indexed(cache, out) == first
    assert reads == []


def test_a_recently_changed_file_is_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files changed within RACY_NS of a check are read by every check until they are older."""
    out, cache = tree(tmp_path), tmp_path / "cache"
    _indexed(cache, out)
    _indexed(cache, out)
    assert OutIndex.open(cache, out).known == {}
    _reads_every_file(cache, out, monkeypatch)


def test_the_first_check_of_a_directory_keeps_only_its_identity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What CI checks once (a fresh checkout) costs no index of its files; the next check of
    the same directory keeps them."""
    monkeypatch.setattr(out_index, "RACY_NS", 0)
    out, cache = tree(tmp_path), tmp_path / "cache"
    _indexed(cache, out)
    assert OutIndex.open(cache, out).known == {}
    reads = counted_reads(monkeypatch)
    _indexed(cache, out)
    assert len(reads) == FILES and len(OutIndex.open(cache, out).known) == FILES


def test_an_index_is_of_one_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another directory at out/'s path is read whole, even holding the very same files."""
    monkeypatch.setattr(out_index, "RACY_NS", 0)
    out, cache = tree(tmp_path), tmp_path / "cache"
    digest = _primed(cache, out)
    out.rename(tmp_path / "old")
    out.mkdir()
    (tmp_path / "old" / "clusters").rename(out / "clusters")  # the files keep their inodes
    assert read_in_full(out) == digest
    _reads_every_file(cache, out, monkeypatch)


def test_an_unreadable_index_is_an_empty_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(out_index, "RACY_NS", 0)
    out, cache = tree(tmp_path), tmp_path / "cache"
    _primed(cache, out)
    (saved,) = cache.glob("*.outindex")
    saved.write_bytes(b"not a pickle")
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
    monkeypatch.setattr(out_index, "RACY_NS", 0)
    monkeypatch.delenv("GPUFLEET_NO_CACHE")
    monkeypatch.setenv("GPUFLEET_CACHE", str(tmp_path / "cache"))
    assert run_cli("compile", "--check")[0] == 0  # compiles and records
    for _ in range(2):  # out/'s identity, then its files
        assert run_cli("compile", "--check")[0] == 0
    assert len(compiles) == 1
    assert OutIndex.open(tmp_path / "cache", example_repo / "out").known
    time.sleep(TICK)
    _same_size_and_mtime(example_repo / "out" / "report.md", lambda p, d: p.write_bytes(d))
    answer = run_cli("compile", "--check")
    assert len(compiles) == 2, "an edit of out/ was answered from the record"
    assert answer[0] == 1
    assert answer == run_cli("compile", "--check", "--no-cache")
