"""out/ read for a check in a forked process (compiler.cache.out_reader): the same digest as
reading it here, none of it read here, the index saved only when the check says so, and a
process that fails costs nothing but the speed."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

import compiler.cache.out_reader as out_reader
from compiler.cache.file_index import OUT_INDEX, FileIndex
from compiler.cache.out_reader import OutReader
from tests.out_trees import FILES, counted_reads, read_in_full, tree


@pytest.fixture(autouse=True)
def _forking(monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader forks its process in every test here (but the one that asks it not to)."""
    monkeypatch.delenv("GPUFLEET_WORKERS", raising=False)


@pytest.fixture
def reads_here(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files read through a file index in this process from now on (a forked process
    counts its own)."""
    return counted_reads(monkeypatch)


def test_the_digest_is_read_in_another_process(tmp_path: Path, reads_here: list[str]) -> None:
    out = tree(tmp_path)
    expected = read_in_full(out)
    reads_here.clear()
    reader = OutReader.start(tmp_path / "cache", out)
    try:
        assert reader.digest() == expected
    finally:
        reader.stop()
    assert reads_here == []


def test_what_the_digest_is_of_is_out_as_it_is_when_read(tmp_path: Path) -> None:
    """A reader started after an edit sees it; one of a tree with a symlink gives None, as
    store.out_digest does."""
    out = tree(tmp_path)
    before = read_in_full(out)
    (out / "clusters/c0/file-0.yaml").write_text("kind: Thing\nindex: edited\n")
    edited = read_in_full(out)
    assert edited not in (before, None)
    for expected in (edited, None):
        if expected is None:
            (out / "link.yaml").symlink_to(out / "clusters/c0/file-0.yaml")
        reader = OutReader.start(tmp_path / "cache", out)
        try:
            assert reader.digest() == expected
        finally:
            reader.stop()


def test_the_index_is_saved_only_when_the_check_says_so(tmp_path: Path) -> None:
    """The first check of a directory keeps its identity (compiler.cache.file_index): the
    index file exists once the reader was told to keep it, and not when it was stopped."""
    out, cache = tree(tmp_path), tmp_path / "cache"
    stopped = OutReader.start(cache, out)
    assert stopped.digest() == read_in_full(out)
    stopped.stop()
    assert sorted(cache.glob("*.outindex")) == []
    kept = OutReader.start(cache, out)
    kept.digest()
    kept.keep_index()
    kept.stop()
    assert len(sorted(cache.glob("*.outindex"))) == 1
    assert FileIndex.open(cache, out, OUT_INDEX).seen_before


def test_a_reader_whose_process_died_reads_here(
    tmp_path: Path, reads_here: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tree(tmp_path)
    expected = read_in_full(out)
    reads_here.clear()
    here, real = os.getpid(), out_reader.out_digest

    def dies_elsewhere(out: Path, index: FileIndex) -> str | None:
        if os.getpid() != here:  # the forked process dies before it sends anything
            os.kill(os.getpid(), signal.SIGKILL)
        return real(out, index)

    monkeypatch.setattr(out_reader, "out_digest", dies_elsewhere)
    reader = OutReader.start(tmp_path / "cache", out)
    assert reader._pid is not None
    try:
        assert reader.digest() == expected
        reader.keep_index()  # saved here, from what was read here
    finally:
        reader.stop()
    assert len(reads_here) == FILES
    assert FileIndex.open(tmp_path / "cache", out, OUT_INDEX).seen_before


def test_one_process_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUFLEET_WORKERS", "1")
    out = tree(tmp_path)
    reader = OutReader.start(tmp_path / "cache", out)
    assert reader._pid is None
    assert reader.digest() == read_in_full(out)


def test_a_check_from_the_record_reads_out_in_another_process(
    example_repo: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    run_cli: Callable[..., tuple[int, str, str]],
    compiles: list[int],
    reads_here: list[str],
) -> None:
    """The whole path: the check that the record answers reads no file of out/ itself, and
    an edit of out/ is still seen (the next check compiles and says out/ is stale)."""
    monkeypatch.delenv("GPUFLEET_NO_CACHE")
    monkeypatch.setenv("GPUFLEET_CACHE", str(tmp_path / "cache"))
    assert run_cli("compile", "--check")[0] == 0  # compiles and records
    reads_here.clear()
    assert run_cli("compile", "--check")[0] == 0
    assert len(compiles) == 1
    out = (example_repo / "out").resolve()
    assert [path for path in reads_here if Path(path).resolve().is_relative_to(out)] == []
    assert reads_here, "the policy files were not read through their index"
    report = example_repo / "out" / "report.md"
    report.write_text(report.read_text() + "\nedited\n")
    assert run_cli("compile", "--check")[0] == 1
    assert len(compiles) == 2, "an edit of out/ was answered from the record"
