"""The warm worker (compiler.parallel.WarmWorker): forked before its task exists, warmed up
meanwhile, then sent one task pickled; and the one cluster it compiles (per_cluster.alone)
comes out as it would from the whole fleet."""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from compiler.diagnostics import CompileError, Diagnostic
from compiler.parallel import warm_worker
from compiler.per_cluster import alone, compile_cluster
from compiler.pipeline import Compiled
from compiler.report.previous import read_previous_steering
from tests.conftest import EXAMPLE, REPO
from tests.random_fleets import fleet

WARMED: list[int] = []
"""Which processes warmed up (a worker's own copy, forked from the test's)."""


def _warm_up() -> None:
    WARMED.append(os.getpid())


def _failing_warm_up() -> None:
    raise RuntimeError("cannot warm up")


def _warmed_in() -> tuple[list[int], int]:
    return WARMED, os.getpid()


def _raise_compile_error() -> None:
    raise CompileError([Diagnostic("GF401", "it does not fit")])


def _raise_value_error() -> None:
    raise ValueError("not a compile error")


def _exit() -> None:
    os._exit(3)


@pytest.fixture(autouse=True)
def two_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUFLEET_WORKERS", "2")


def test_the_task_runs_in_the_worker_after_its_warm_up() -> None:
    with warm_worker(True, _warm_up) as worker:
        assert worker is not None and not worker.taken
        worker.take(_warmed_in)
        assert worker.taken
        warmed, pid = worker.result()
    assert warmed == [pid] and pid != os.getpid()
    assert WARMED == []  # not in this process


def test_a_warm_up_that_fails_leaves_the_task_to_run() -> None:
    with warm_worker(True, _failing_warm_up) as worker:
        assert worker is not None
        worker.take(pow, 2, 10)
        assert worker.result() == 1024


def test_a_compile_error_comes_back_whole() -> None:
    with warm_worker(True, _warm_up) as worker:
        assert worker is not None
        worker.take(_raise_compile_error)
        with pytest.raises(CompileError) as caught:
            worker.result()
    assert [(d.code, d.message) for d in caught.value.diagnostics] == [("GF401", "it does not fit")]


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        (_raise_value_error, "internal error in a worker process: ValueError: not a compile"),
        (_exit, "a worker process died"),
    ],
)
def test_any_other_failure_is_an_internal_error(task: object, expected: str) -> None:
    with warm_worker(True, _warm_up) as worker:
        assert worker is not None
        worker.take(task)  # type: ignore[arg-type]
        with pytest.raises(CompileError) as caught:
            worker.result()
    [diagnostic] = caught.value.diagnostics
    assert diagnostic.code == "GF001" and expected in diagnostic.message


def test_leaving_stops_a_busy_worker_at_once() -> None:
    """Killed, not waited for: a worker let finish its task would end with exit code 0."""
    with warm_worker(True, _warm_up) as worker:
        assert worker is not None
        worker.take(time.sleep, 60)
        process = worker._process
    assert not process.is_alive() and process.exitcode == -signal.SIGKILL


@pytest.mark.parametrize(("wanted", "workers"), [(False, "2"), (True, "1")])
def test_none_where_unwanted_or_one_process_is_asked_for(
    wanted: bool, workers: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUFLEET_WORKERS", workers)
    with warm_worker(wanted, _warm_up) as worker:
        assert worker is None


def test_a_cluster_alone_compiles_as_in_its_fleet(compiled_example: Compiled) -> None:
    """What a warm worker is sent, pickled (the cluster, the ladder and the Fleet), gives the
    very files, plan and synced kinds that the whole fleet gives."""
    fleet = compiled_example.fleet
    previous = read_previous_steering(REPO / "out")[0]
    for cluster in fleet.clusters:
        steering = previous.get(cluster.name)
        whole = compile_cluster(fleet, cluster, steering, 10.0, 10.0, digested=True)
        sent = pickle.loads(pickle.dumps((alone(fleet, cluster), cluster, steering)))
        one = compile_cluster(*sent, 10.0, 10.0, True)
        assert one == whole, cluster.name


def test_ctrl_c_is_left_to_the_parent() -> None:
    """A terminal's Ctrl-C reaches the whole process group: the worker neither dies of it nor
    prints a traceback; the parent, unwinding, stops it."""
    with warm_worker(True, _warm_up) as worker:
        assert worker is not None
        worker.take(time.sleep, 0.5)
        time.sleep(0.2)  # past its start, into the task
        os.kill(worker._process.pid, signal.SIGINT)  # type: ignore[arg-type]
        assert worker.result() is None


WARM_CLUSTERS = """
import json
import sys
from pathlib import Path

from compiler.cel import ast
from compiler.per_cluster import alone, compile_cluster, warm_up
from compiler.pipeline import resolve_policies

warm_up()
parsed = ast.parse_checked
anew = []


def counted(source, variables):
    before = parsed.cache_info().misses
    found = parsed(source, variables)
    if parsed.cache_info().misses > before:
        anew.append(source)
    return found


for module in list(sys.modules.values()):
    if module is not ast and getattr(module, "parse_checked", None) is parsed:
        module.parse_checked = counted
for directory in sys.argv[1:]:
    fleet = resolve_policies(Path(directory))  # tiers' selectors are parsed here
    for cluster in fleet.clusters:
        anew.clear()
        compile_cluster(alone(fleet, cluster), cluster, None, 10.0, 10.0)
        print(json.dumps([directory, cluster.name, anew]))
"""


def test_a_warmed_up_process_parses_no_admission_expression_anew(tmp_path: Path) -> None:
    """warm_up parses every CEL expression the admission policies of the example fleet and of
    random fleets write (compiler.emit.admission_warm_up), but the few that bake the cluster's
    namespaces in: a fresh process, so that no other test parsed them before."""
    directories = [str(EXAMPLE)]
    for seed in (3, 6, 19, 33, 53):
        directory = tmp_path / str(seed)
        for relative, text in fleet(seed).items():
            (directory / relative).parent.mkdir(parents=True, exist_ok=True)
            (directory / relative).write_text(text)
        directories.append(str(directory))
    found = subprocess.run(
        [sys.executable, "-c", WARM_CLUSTERS, *directories],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    ).stdout.splitlines()
    clusters = [json.loads(line) for line in found]
    assert len(clusters) >= len(directories), found
    for directory, cluster, anew in clusters:
        baked = [s for s in anew if s.startswith("!(request.namespace in ")]
        assert anew == baked, f"{directory}, {cluster}: {anew}"
