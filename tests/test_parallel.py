"""Clusters solved and rendered in worker processes give the very same output as in-process."""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks.generate import Size, generate
from compiler.diagnostics import CompileError, Diagnostic, Span
from compiler.load import load_policies
from compiler.load.document import SourceDocument
from compiler.load.loader import FILES_PER_TASK
from compiler.parallel import worker_count
from compiler.pipeline import Compiled, compile_policies
from compiler.report.previous import read_previous_steering
from tests.conftest import EXAMPLE, REPO


def test_workers_give_byte_identical_output(
    monkeypatch: pytest.MonkeyPatch, compiled_example: Compiled
) -> None:
    monkeypatch.setenv("GPUFLEET_WORKERS", "2")
    assert worker_count(len(compiled_example.plans)) == 2
    parallel = compile_policies(EXAMPLE, previous=read_previous_steering(REPO / "out")[0])
    assert parallel.tree == compiled_example.tree
    assert list(parallel.tree) == list(compiled_example.tree)


def test_conflicts_found_in_workers_are_reported(
    monkeypatch: pytest.MonkeyPatch, policy_copy: Path
) -> None:
    grant = policy_copy / "grants" / "vision.yaml"
    grant.write_text(
        grant.read_text()
        .replace("guaranteed: 16", "guaranteed: 400")
        .replace("limit: 32", "limit: 400")
    )
    monkeypatch.setenv("GPUFLEET_WORKERS", "2")
    with pytest.raises(CompileError) as caught:
        compile_policies(policy_copy)
    assert [d.code for d in caught.value.diagnostics] == ["GF401"]


def test_small_fleets_stay_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPUFLEET_WORKERS", raising=False)
    assert worker_count(2) == 1


def test_files_loaded_in_workers_are_the_same_documents_and_problems(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    files = 3 * FILES_PER_TASK
    for index in range(files):
        text = f"kind: Team\nmetadata: {{name: team-{index:03d}}}\nspec: {{namespaces: [a, b]}}\n"
        if index in (5, files - 5):  # a problem in the first task and in the last
            text += "spec: {}\n"
        (tmp_path / f"team-{index:03d}.yaml").write_text(text)

    def load() -> tuple[list[SourceDocument], list[str]]:
        try:
            return load_policies(tmp_path), []
        except CompileError as error:
            return [], [str(d.span) for d in error.diagnostics]

    monkeypatch.setenv("GPUFLEET_WORKERS", "1")
    alone = load()
    monkeypatch.setenv("GPUFLEET_WORKERS", "2")
    assert load() == alone
    assert alone[1] == [f"{tmp_path}/team-005.yaml:4:1", f"{tmp_path}/team-{files - 5}.yaml:4:1"]
    (tmp_path / "team-005.yaml").write_text("kind: Team\n")
    (tmp_path / f"team-{files - 5}.yaml").write_text("kind: Team\n")
    documents = load()[0]
    monkeypatch.setenv("GPUFLEET_WORKERS", "1")
    assert documents == load()[0] and len(documents) == files
    assert documents[7].span(("metadata", "name")) == Span(f"{tmp_path}/team-007.yaml", 2, 18)


def test_the_command_reports_what_its_file_readers_found(tmp_path: Path) -> None:
    """Through the real entry point (files read in worker processes), a problem in one of
    hundreds of files is reported exactly as an in-process load reports it."""
    for index in range(2 * FILES_PER_TASK + 3):
        text = f"kind: Team\nmetadata: {{name: team-{index:03d}}}\n"
        (tmp_path / f"team-{index:03d}.yaml").write_text(text)
    (tmp_path / "team-100.yaml").write_text("kind: Team\nmetadata: {name: [\n")
    command = [sys.executable, "-m", "compiler", "check", "--policies", str(tmp_path)]
    environment = {**os.environ, "GPUFLEET_WORKERS": "2"}
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, env=environment)
    with pytest.raises(CompileError) as caught:
        load_policies(tmp_path)
    (expected,) = caught.value.diagnostics
    assert done.returncode == 2
    assert f"{expected.span}: error[{expected.code}]" in done.stderr


def test_diagnostics_survive_pickling() -> None:
    """Worker processes send diagnostics back pickled: every part must come back equal."""
    span = Span("policies/a.yaml", 3, 5, 3, 9)
    diagnostic = Diagnostic("GF401", "it does not fit", span, ("cut",), (("here", span),))
    error = CompileError([diagnostic, Diagnostic("GF701", "too costly")])
    back = pickle.loads(pickle.dumps(error))
    assert isinstance(back, CompileError)
    assert back.diagnostics == error.diagnostics and str(back) == str(error)
    assert pickle.loads(pickle.dumps(diagnostic)) == diagnostic


def worker_child(*argv: str | Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run tests/worker_child.py with two workers; a hang fails the test after `timeout`."""
    command = [sys.executable, "-m", "tests.worker_child", *map(str, argv)]
    environment = {**os.environ, "GPUFLEET_WORKERS": "2"}
    return subprocess.run(
        command, cwd=REPO, capture_output=True, text=True, env=environment, timeout=timeout
    )


def test_a_diagnostic_raised_by_emit_in_a_worker_is_reported(tmp_path: Path) -> None:
    """GF701 is raised while a worker renders its cluster: the parent reports it (it hung,
    unable to rebuild the CompileError)."""
    out = tmp_path / "out"
    done = worker_child("emit-error", "--", "compile", "--policies", EXAMPLE, "--out", out)
    assert done.returncode == 1, done.stderr
    assert "error[GF701]: admission policy" in done.stderr and "Traceback" not in done.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("unpicklable", "GF001: internal error in a worker process: TwoPartError: worker failed"),
        ("exit", "GF001: internal error: a worker process died"),
    ],
)
def test_a_worker_that_fails_unexpectedly_is_an_internal_error(kind: str, expected: str) -> None:
    done = worker_child("map", kind, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(expected), done.stdout


def children(pid: int) -> set[int]:
    """The live child processes of `pid` (Linux /proc)."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        found |= {int(word) for word in task.read_text().split()}
    return {child for child in found if alive(child)}


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return status.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
def test_workers_die_with_a_killed_gpufleet(tmp_path: Path) -> None:
    """gpufleet SIGKILLed while its workers solve leaves no worker behind (they waited for
    work from the dead parent forever)."""
    out = tmp_path / "out"
    command = [sys.executable, "-m", "tests.worker_child", "sleep", "--", "compile"]
    command += ["--policies", str(EXAMPLE), "--out", str(out)]
    environment = {**os.environ, "GPUFLEET_WORKERS": "2"}
    child = subprocess.Popen(
        command, cwd=REPO, env=environment, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    try:
        assert child.stdout is not None
        busy = {int(child.stdout.readline().split()[1]) for _ in range(2)}
        assert busy == children(child.pid)
    finally:
        child.kill()
        child.wait(timeout=30)
    deadline = time.monotonic() + 20
    while any(alive(pid) for pid in busy) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [pid for pid in busy if alive(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, "workers outlived their killed parent"


PER_CLUSTER = ("compiler.solve.solver", "compiler.emit.registry", "ortools")
"""What only a process that compiles a cluster imports: the solver, the emitters, OR-Tools."""


@pytest.mark.parametrize("cache", [False, True])
def test_the_process_that_writes_compiles_no_cluster_it_need_not(
    cache: bool, tmp_path: Path
) -> None:
    """Workers compile every cluster of a fleet of 8 (without the cache), or the cache gives
    them back (with it, after an edit that moves positions only): the process that writes
    out/ never imports the solver or the emitters (a fifth of its start-up)."""
    policies, out = tmp_path / "policies", tmp_path / "out"
    generate(Size(8, 12, 4, 4, 0.3, 0.0), 1, policies)
    env = {**os.environ, "GPUFLEET_WORKERS": "2", "GPUFLEET_CACHE": str(tmp_path / "cache")}
    if cache:
        env.pop("GPUFLEET_NO_CACHE", None)
    script = (
        "import sys\n"
        "from compiler.cli import main\n"
        f"code = main(['compile', '--policies', {str(policies)!r}, '--out', {str(out)!r}])\n"
        f"print(code, [m for m in {PER_CLUSTER!r} if m in sys.modules])\n"
    )

    def loaded() -> str:
        done = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, cwd=REPO
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip().splitlines()[-1]

    if cache:
        loaded()  # fills the cache
        team = sorted((policies / "grants").glob("*.yaml"))[0]
        team.write_text(f"# moved\n{team.read_text()}")
    assert loaded() == "0 []"
