"""A large write is shared with a forked process (compiler.write.halves): every file is written
once, the second half by the other process, and whatever fails in either is raised by the
writer, out/ then left as it was and the forked process gone."""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import compiler.write.writer as writer
from compiler.write import write_tree
from compiler.write.halves import SHARED_FROM, each_shared
from tests.test_write_failures import state

FILES = SHARED_FROM + 10


def _paths(count: int = FILES) -> list[str]:
    return [f"dir-{i // 500:02d}/file-{i:05d}.txt" for i in range(count)]


def _pid_writer(root: Path) -> Callable[[str], None]:
    def write(path: str) -> None:
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(str(os.getpid()))

    return write


def test_the_second_half_is_written_by_another_process(tmp_path: Path) -> None:
    paths = _paths()
    each_shared(paths, _pid_writer(tmp_path))
    writers = [(tmp_path / path).read_text() for path in paths]
    half = len(paths) // 2
    assert set(writers[:half]) == {str(os.getpid())}
    assert len(set(writers[half:])) == 1
    assert writers[half] != str(os.getpid())
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.txt")) == paths


@pytest.mark.parametrize("why", ["few files", "one worker"])
def test_a_small_write_or_one_worker_stays_in_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, why: str
) -> None:
    paths = _paths(SHARED_FROM - 1 if why == "few files" else FILES)
    if why == "one worker":
        monkeypatch.setenv("GPUFLEET_WORKERS", "1")
    each_shared(paths, _pid_writer(tmp_path))
    assert {(tmp_path / path).read_text() for path in paths} == {str(os.getpid())}


@pytest.mark.parametrize("error", [OSError(errno.ENOSPC, "No space left", "x"), KeyError("x")])
def test_a_failure_in_the_forked_half_is_raised_as_it_was(error: Exception) -> None:
    paths = _paths()
    failing = paths[-3]

    def write(path: str) -> None:
        if path == failing:
            raise error

    with pytest.raises(type(error)) as raised:
        each_shared(paths, write)
    assert raised.value.args == error.args


def test_a_failure_in_the_writers_half_ends_the_forked_process(tmp_path: Path) -> None:
    paths = _paths()
    pid_file = tmp_path / "forked-pid"

    def write(path: str) -> None:
        if path == paths[len(paths) // 2]:  # the forked process's first file
            pid_file.write_text(str(os.getpid()))
            time.sleep(60)  # it would outlive the writer, were it not ended
        if path == paths[10]:
            while not pid_file.exists():
                time.sleep(0.01)
            raise OSError(errno.EIO, "Input/output error", path)

    started = time.monotonic()
    with pytest.raises(OSError, match="Input/output error"):
        each_shared(paths, write)
    assert time.monotonic() - started < 30
    with pytest.raises(ProcessLookupError):  # ended and reaped, not left a zombie
        os.kill(int(pid_file.read_text()), 0)


def test_a_write_of_a_large_tree_failing_in_the_forked_half_leaves_out_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    new_tree = {path: f"new {path}\n" for path in _paths()}
    out = tmp_path / "out"
    write_tree(out, {path: f"old {path}\n" for path in new_tree})
    before = state(out)
    failing = sorted(new_tree)[-5]
    write_file = writer.write_file

    def fails_once_there(path: str, data: bytes) -> None:
        if path.endswith(failing):
            raise OSError(errno.ENOSPC, "No space left on device", path)
        write_file(path, data)

    monkeypatch.setattr(writer, "write_file", fails_once_there)
    with pytest.raises(OSError) as raised:
        write_tree(out, new_tree)
    assert raised.value.errno == errno.ENOSPC
    assert state(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    monkeypatch.undo()
    write_tree(out, new_tree)
    assert all((out / path).read_text() == text for path, text in new_tree.items())
