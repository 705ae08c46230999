"""The lock on out/: one compile writes it at a time, a second one waits (saying for whom) or
gives up with GF506, and the commands that read out/ never read it while it is written."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from compiler.pipeline import Compiled
from compiler.write import write_tree
from compiler.write.lock import lock_path, locked
from tests.conftest import EXAMPLE, REPO
from tests.test_crash_safety import snapshot

Run = Callable[..., tuple[int, str, str]]


def gpufleet(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "compiler", *map(str, args)]


def test_a_second_compile_waits_for_the_first(tmp_path: Path, compiled_example: Compiled) -> None:
    """Two compiles into one out/: the second waits, saying for which process, until the
    first has written; then it finds out/ up to date (they once left out/ empty, both
    exiting 0)."""
    out, go = tmp_path / "out", tmp_path / "go"
    compile_example = ["compile", "--policies", EXAMPLE, "--out", out]
    first = subprocess.Popen(
        [sys.executable, "-m", "tests.crash_writer", "cli", "0.001", go, "--", *compile_example],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    second: subprocess.Popen[str] | None = None
    try:
        assert first.stdout is not None and first.stdout.readline() == "writing\n"
        second = subprocess.Popen(
            gpufleet(*compile_example),
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert second.stderr is not None
        said = second.stderr.readline()  # the first thing it says: it waits (it once wrote)
        assert said.startswith(f"note: waiting for gpufleet (pid {first.pid}, writing) ")
        assert f"{out}" in said and "--lock-timeout" in said
    finally:
        go.touch()
        assert first.wait(timeout=60) == 0
        if second is not None:
            stdout, stderr = second.communicate(timeout=60)
    assert second.returncode == 0, stderr
    assert "0 added, 0 changed, 0 removed" in stdout
    assert "waiting" not in stderr  # said once
    expected = tmp_path / "expected"
    write_tree(expected, compiled_example.tree)
    assert snapshot(out) == snapshot(expected)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".out.lock", "expected", "go", "out"]


def test_a_compile_gives_up_after_the_lock_timeout(run_cli: Run, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run_cli("compile", "--policies", EXAMPLE, "--out", out)[0] == 0
    before = snapshot(out)
    with locked(out, write=True, timeout=1, say=print):
        code, _, err = run_cli(
            "compile", "--policies", EXAMPLE, "--out", out, "--lock-timeout", "0.2"
        )
    assert code == 3
    assert f"note: waiting for gpufleet (pid {os.getpid()}, writing) to finish with {out}" in err
    assert f"error[GF506]: {out} is locked by gpufleet (pid {os.getpid()}, writing)" in err
    assert "gave up after 0.2 s" in err and "Traceback" not in err
    assert snapshot(out) == before


READERS = [
    ["compile", "--check"],
    ["diff"],
    ["report"],
    ["explain"],
    ["render", "--cluster", "prod-east"],
]


@pytest.mark.parametrize("command", READERS, ids=lambda c: " ".join(c))
def test_commands_that_read_out_wait_for_a_write(
    run_cli: Run, tmp_path: Path, command: list[str]
) -> None:
    out = tmp_path / "out"
    with locked(out, write=True, timeout=1, say=print):
        code, _, err = run_cli(*command, "--policies", EXAMPLE, "--out", out, "--lock-timeout=0.1")
    assert code == 3 and "error[GF506]" in err


def test_readers_share_out_and_a_compile_waits_for_them(run_cli: Run, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run_cli("compile", "--policies", EXAMPLE, "--out", out)[0] == 0
    with locked(out, write=False, timeout=1, say=print):
        code, said, err = run_cli("diff", "--policies", EXAMPLE, "--out", out)
        assert code == 0 and "up to date" in said and "waiting" not in err
        code, _, err = run_cli(
            "compile", "--policies", EXAMPLE, "--out", out, "--lock-timeout", "0.1"
        )
        assert code == 3 and f"(pid {os.getpid()}, reading)" in err


def test_the_lock_is_beside_out_never_in_it(run_cli: Run, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run_cli("compile", "--policies", EXAMPLE, "--out", out)[0] == 0
    assert lock_path(out) == tmp_path / ".out.lock" and lock_path(out).is_file()
    assert not [p for p in snapshot(out) if "lock" in p]
    assert run_cli("compile", "--check", "--policies", EXAMPLE, "--out", f"{out}/")[0] == 0


def test_a_reader_that_cannot_create_the_lock_reads_unlocked(
    run_cli: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`compile --check` in a read-only checkout: nobody can write out/ there either."""
    out = tmp_path / "out"
    assert run_cli("compile", "--policies", EXAMPLE, "--out", out)[0] == 0
    lock_path(out).unlink()
    real_open = os.open

    def read_only(path: str | Path, flags: int, *args: int, **kwargs: int) -> int:
        if str(path).endswith(".lock") and flags & os.O_CREAT:
            raise OSError(30, "Read-only file system", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", read_only)
    code, said, err = run_cli("compile", "--check", "--policies", EXAMPLE, "--out", out)
    assert code == 0 and "up to date" in said, err
    code, _, err = run_cli("compile", "--policies", EXAMPLE, "--out", out)
    assert code == 2 and f"error[GF502]: cannot write {out}: cannot create its lock" in err
    assert err.rstrip().endswith(f"{lock_path(out)}: Read-only file system")


def test_a_reader_of_no_out_leaves_no_lock_behind(run_cli: Run, tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, said, _ = run_cli("report", "--policies", EXAMPLE, "--out", out)
    assert code == 0 and "prod-east" in said
    assert list(tmp_path.iterdir()) == []
