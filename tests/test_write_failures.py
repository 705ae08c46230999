"""A write that fails leaves out/ exactly as it was, and nothing behind that breaks the next
run: a read-only out/, a leftover of an older run that cannot simply be removed, a failure
at any step of the write."""

from __future__ import annotations

import ctypes
import errno
import os
import random
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import compiler.write.atomic as atomic
import compiler.write.writer as writer
from compiler.pipeline import Compiled
from compiler.write import write_tree
from tests.conftest import EXAMPLE, REPO
from tests.test_crash_safety import SCRATCH

_PR_CAPBSET_DROP = 24
_OVERRIDES = (1, 2, 3)
"""CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER: what lets root ignore file modes."""


def _drop_overrides() -> None:
    """In the child, before exec: root keeps its uid but no longer ignores file modes."""
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    for capability in _OVERRIDES:
        if prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "cannot drop a capability")


def unprivileged_gpufleet(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """Run `gpufleet ARGS` as a user file modes apply to (root gives up its overrides)."""
    try:
        return subprocess.run(
            [sys.executable, "-m", "compiler", *map(str, args)],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
            preexec_fn=_drop_overrides if os.geteuid() == 0 else None,
        )
    except subprocess.SubprocessError as error:
        pytest.skip(f"root cannot give up its file-mode overrides here: {error}")


def state(root: Path) -> dict[str, tuple[int, bytes]]:
    """Every entry below `root` (itself included): its mode and, for a file, its bytes."""
    found = {".": (root.stat().st_mode, b"")}
    for path in sorted(root.rglob("*")):
        data = path.read_bytes() if path.is_file() else b""
        found[path.relative_to(root).as_posix()] = (path.stat().st_mode, data)
    return found


def make_writable(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)


def test_a_read_only_out_is_left_as_it_was(tmp_path: Path) -> None:
    """A read-only out/ is not written: GF502, out/ untouched, nothing left beside it (the
    write went through, and left the old tree, undeletable, as .out.retired: every later
    compile failed on it)."""
    out = tmp_path / "out"
    write_tree(out, {"report.md": "an older compile\n"})
    for path in [*out.rglob("*"), out]:
        path.chmod(path.stat().st_mode & ~0o222)
    before = state(out)
    done = unprivileged_gpufleet("compile", "--policies", EXAMPLE, "--out", out)
    assert done.returncode == 2, done.stderr
    assert f"error[GF502]: cannot write {out}: {out} is read-only" in done.stderr
    assert state(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [".out.lock", "out"]
    make_writable(out)
    done = unprivileged_gpufleet("compile", "--policies", EXAMPLE, "--out", out)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [".out.lock", "out"]


def test_a_read_only_leftover_of_an_older_run_is_removed(tmp_path: Path) -> None:
    out, retired = tmp_path / "out", tmp_path / ".out.retired"
    write_tree(out, {"report.md": "an older compile\n"})
    (retired / "clusters").mkdir(parents=True)
    (retired / "clusters" / "a.yaml").write_text("kind: Old\n")
    for path in (retired / "clusters", retired):
        path.chmod(0o555)
    done = unprivileged_gpufleet("compile", "--policies", EXAMPLE, "--out", out)
    assert done.returncode == 0, done.stderr
    assert not retired.exists() and (out / "report.md").is_file()


class Injected(OSError):
    """The failure a test injects."""


def fail_at(monkeypatch: pytest.MonkeyPatch, step: int) -> list[int]:
    """Make the `step`-th file-system call of a write (a file write, hard link, rename,
    exchange, removal, copy or mkdir) raise EIO; returns the running count of calls."""
    count = [0]

    def hooked(function: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            count[0] += 1
            if count[0] == step:
                raise Injected(errno.EIO, "injected")
            return function(*args, **kwargs)

        return call

    monkeypatch.setattr(os, "link", hooked(os.link))
    monkeypatch.setattr(writer, "write_file", hooked(writer.write_file))
    monkeypatch.setattr(shutil, "rmtree", hooked(shutil.rmtree))
    monkeypatch.setattr(shutil, "copy2", hooked(shutil.copy2))
    monkeypatch.setattr(atomic, "exchange", hooked(atomic.exchange))
    monkeypatch.setattr(Path, "rename", hooked(Path.rename))
    monkeypatch.setattr(Path, "mkdir", hooked(Path.mkdir))
    return count


def test_a_write_failing_at_any_step_leaves_out_old_or_new(
    monkeypatch: pytest.MonkeyPatch, compiled_example: Compiled
) -> None:
    """Whichever call of a write fails, out/ is the old tree and nothing is left beside it;
    once the swap is done, out/ is the new tree and the write succeeds (the old tree may be
    left to remove); either way the next write succeeds and leaves nothing behind."""
    with tempfile.TemporaryDirectory(dir=SCRATCH) as scratch:  # tmpfs: hundreds of writes
        fail_everywhere(monkeypatch, compiled_example.tree, Path(scratch))


def fail_everywhere(monkeypatch: pytest.MonkeyPatch, new_tree: dict[str, str], root: Path) -> None:
    """Write `new_tree` over an older tree in `root`/out, failing each call in turn."""
    old_tree = {path: text + "# old\n" for path, text in new_tree.items()}
    out = root / "out"

    def reset() -> dict[str, tuple[int, bytes]]:
        shutil.rmtree(out, ignore_errors=True)
        write_tree(out, old_tree)
        (out / "mine.txt").write_text("the user's own file\n")
        return state(out)

    old = reset()
    with monkeypatch.context() as patch:
        count = fail_at(patch, 0)
        write_tree(out, new_tree)
    steps = count[0]
    new = state(out)
    assert new != old
    edges = {*range(1, 6), *range(steps - 6, steps + 1)}
    outcomes = []
    for step in sorted(edges | set(random.Random(steps).sample(range(6, steps - 6), 10))):
        assert reset() == old
        with monkeypatch.context() as patch:
            fail_at(patch, step)
            try:
                write_tree(out, new_tree)
                outcomes.append("written")
            except Injected:
                outcomes.append("failed")
        left = sorted(p.name for p in root.iterdir())
        if outcomes[-1] == "failed":
            assert state(out) == old, f"failure at call {step}: out/ changed"
            assert left == ["out"], f"failure at call {step} left {left}"
        else:
            assert state(out) == new
            assert {*left} - {".out.staging", ".out.retired"} == {"out"}, f"call {step}: {left}"
        write_tree(out, new_tree)
        assert state(out) == new
        assert sorted(p.name for p in root.iterdir()) == ["out"]
    assert outcomes.count("failed") > 10, outcomes
