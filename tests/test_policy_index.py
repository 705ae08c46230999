"""The policy directory's index (compiler.cache.file_index, POLICY_INDEX): a compile with the
cache takes its key without reading the policy files that did not change, loads them from
what it parsed before by their digests, and is exactly what reading every file gives."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from compiler.cache import compile_key
from compiler.cache.file_index import POLICY_INDEX, FileIndex
from compiler.cache.parsed import ParsedFileCache
from compiler.cache.session import CompileCache
from compiler.load.loader import load_policies
from compiler.policy_files import PolicySnapshot, read_policy_files
from tests.conftest import EXAMPLE
from tests.out_trees import TICK, counted_reads
from tests.test_compile_cache import OPTIONS

Cli = Callable[..., tuple[int, str, str]]


@pytest.fixture
def policies(tmp_path: Path) -> Path:
    """A copy of the example's policies, a tick old (so that an index may keep its files)."""
    copy = tmp_path / "policies"
    shutil.copytree(EXAMPLE, copy)
    time.sleep(TICK)
    return copy


def _snapshot(cache: Path, policies: Path) -> PolicySnapshot:
    """The policy files as a compile with the cache in `cache` reads them, its index saved."""
    index = FileIndex.open(cache, policies, POLICY_INDEX)
    snapshot = read_policy_files(policies, index)
    index.save()
    return snapshot


def _key(snapshot: PolicySnapshot, policies: Path, out: Path) -> str:
    return compile_key(policies, snapshot, out, OPTIONS, "code")


def test_unchanged_files_are_not_read_from_the_third_compile_on(
    tmp_path: Path, policies: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first compile keeps the directory's identity, the second its files; the third
    reads none of them, and every key is the one reading every file gives."""
    cache, out = tmp_path / "cache", tmp_path / "out"
    expected = _key(read_policy_files(policies), policies, out)
    files = len(read_policy_files(policies).files)
    reads = counted_reads(monkeypatch)
    for reading in (files, files, 0, 0):
        reads.clear()
        snapshot = _snapshot(cache, policies)
        assert len(reads) == reading
        assert _key(snapshot, policies, out) == expected
    assert all(read.data is None for read in snapshot.contents.values())


def test_an_edit_that_keeps_size_and_mtime_changes_the_key(tmp_path: Path, policies: Path) -> None:
    cache, out = tmp_path / "cache", tmp_path / "out"
    for _ in range(3):
        before = _key(_snapshot(cache, policies), policies, out)
    team = policies / "teams" / sorted(p.name for p in (policies / "teams").iterdir())[0]
    status = team.stat()
    data = bytearray(team.read_bytes())
    data[-2] = ord("#") if data[-2] != ord("#") else ord(" ")
    team.write_bytes(bytes(data))
    os.utime(team, ns=(status.st_atime_ns, status.st_mtime_ns))
    assert team.stat().st_size == status.st_size
    snapshot = _snapshot(cache, policies)
    assert _key(snapshot, policies, out) == _key(read_policy_files(policies), policies, out)
    assert _key(snapshot, policies, out) != before


def test_the_loader_reads_only_what_it_must_parse(
    tmp_path: Path, policies: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files the index vouched for and the parse cache knows are never read; one the parse
    cache lost is read again, and the documents are those of a load without any cache."""
    cache = tmp_path / "cache"
    parsed = ParsedFileCache(cache / "parsed", "code")
    expected = load_policies(policies)
    load_policies(policies, None, parsed, _snapshot(cache, policies))  # fills the parse cache
    _snapshot(cache, policies)  # the index keeps the files
    lost = sorted((cache / "parsed").iterdir())[0]
    lost.unlink()
    snapshot = _snapshot(cache, policies)
    read_again: list[str] = []
    monkeypatch.setattr(
        "compiler.policy_files.read_at_most",
        lambda path, limit: read_again.append(str(path)) or Path(path).read_bytes()[:limit],
    )
    assert load_policies(policies, None, parsed, snapshot) == expected
    assert len(read_again) == 1
    assert not snapshot.changed


def test_a_file_changed_after_the_key_was_taken_is_not_recorded(
    example_repo: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    run_cli: Cli,
    compiles: list[int],
) -> None:
    """A file the index vouched for that changed before the loader had to read it is loaded
    as it is now, and that compile is not recorded: its key is of the bytes before. (Were it
    recorded, putting the file back would find a record that says out/, compiled from the
    edit, is up to date.)"""
    cache, grant = tmp_path / "cache", example_repo / "policies" / "grants" / "gpu-ops.yaml"
    original = grant.read_text()
    edited = original.replace("guaranteed: 0, limit: 8}", "guaranteed: 0, limit: 16}")
    assert edited != original
    monkeypatch.delenv("GPUFLEET_NO_CACHE")
    monkeypatch.setenv("GPUFLEET_CACHE", str(cache))
    time.sleep(TICK)
    for _ in range(3):  # the index keeps the policy files
        assert run_cli("compile")[0] == 0
    shutil.rmtree(cache / "parsed")  # every file must be parsed, so read again
    opened = CompileCache.open

    def edited_after_the_key(*args: object) -> CompileCache | None:
        session = opened(*args)  # type: ignore[arg-type]
        grant.write_text(edited)
        return session

    monkeypatch.setattr(CompileCache, "open", edited_after_the_key)
    assert run_cli("compile")[0] == 0
    monkeypatch.setattr(CompileCache, "open", opened)
    assert grant.read_text() == edited
    grant.write_text(original)
    expected = run_cli("compile", "--check", "--no-cache")
    assert expected[0] == 1  # out/ holds what the edit compiled to
    assert run_cli("compile", "--check") == expected
