"""Clusters solved and emitted task by task: which problems are reported, and when a cluster
missing from the compile cache starts."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping

import pytest

from compiler import per_cluster
from compiler.cache.clusters import ClusterResult
from compiler.diagnostics import CompileError, fail
from compiler.ir import ResolvedCluster, ResolvedFleet, Steering
from compiler.parallel import OrderedWork, warm_worker
from compiler.per_cluster import ClusterFailure, compile_clusters
from compiler.pipeline import Compiled
from compiler.timings import StageTimings


def _error(code: str, index: int, cluster: ResolvedCluster) -> CompileError:
    """`code`, saying `<code> in <index>` at the `index`th cluster of the fleet."""
    return fail(code, f"{code} in {index}", cluster.cluster.source.span(()))


@pytest.mark.parametrize(
    ("first", "second", "reported"),
    [
        # every cluster that does not fit, before any problem found after solving
        ((False, "GF001"), (True, "GF401"), ["GF401 in 1"]),
        ((True, "GF401"), (True, "GF401"), ["GF401 in 0", "GF401 in 1"]),
        # else the first problem found after solving, in the fleet's order
        ((False, "GF701"), (False, "GF001"), ["GF701 in 0"]),
    ],
)
def test_problems_are_reported_as_if_every_cluster_were_solved_before_any_was_emitted(
    monkeypatch: pytest.MonkeyPatch,
    compiled_example: Compiled,
    first: tuple[bool, str],
    second: tuple[bool, str],
    reported: list[str],
) -> None:
    clusters = compiled_example.fleet.clusters
    outcomes = {
        cluster.name: ClusterFailure(solving, _error(code, index, cluster))
        for index, (cluster, (solving, code)) in enumerate(
            zip(clusters, (first, second), strict=True)
        )
    }
    monkeypatch.setattr(
        per_cluster,
        "compile_cluster",
        lambda fleet, cluster, previous, time_limit, explain, digested: outcomes[cluster.name],
    )
    with pytest.raises(CompileError) as caught:
        compile_clusters(compiled_example.fleet, {}, None, 10.0, 10.0, StageTimings())
    assert [d.message for d in caught.value.diagnostics] == reported


class _RecordingCache:
    """A compile cache that records what it is asked, in order: it stores an entry for the
    clusters in `stored`, of which those in `unreadable` do not read back."""

    def __init__(
        self,
        events: list[str],
        results: dict[str, ClusterResult],
        stored: set[str],
        unreadable: set[str],
    ) -> None:
        self.events, self.results = events, results
        self.stored, self.unreadable = stored, unreadable

    def stored_key(
        self, cluster: ResolvedCluster, fleet: ResolvedFleet, previous: Steering | None
    ) -> str | None:
        self.events.append(f"key {cluster.name}")
        return f"key-of-{cluster.name}" if cluster.name in self.stored else None

    def read(self, key: str, cluster: str) -> ClusterResult | None:
        self.events.append(f"read {cluster}")
        assert key == f"key-of-{cluster}"
        return None if cluster in self.unreadable else self.results[cluster]

    def store(
        self,
        fleet: ResolvedFleet,
        previous: Mapping[str, Steering],
        results: Mapping[str, ClusterResult],
    ) -> None:
        self.events.append(f"store {' '.join(results)}")


@pytest.mark.parametrize(
    ("stored", "unreadable", "expected"),
    [
        # the second cluster has no entry: it starts before the first's entry is read
        ({0}, set(), ["key 0", "key 1", "compile 1", "read 0", "store 1"]),
        # the first's entry does not read back: it starts when that is found
        ({0, 1}, {0}, ["key 0", "key 1", "read 0", "compile 0", "read 1", "store 0"]),
        ({0, 1}, set(), ["key 0", "key 1", "read 0", "read 1", "store "]),
    ],
)
def test_a_cluster_without_a_cache_entry_starts_before_any_entry_is_read(
    monkeypatch: pytest.MonkeyPatch,
    compiled_example: Compiled,
    stored: set[int],
    unreadable: set[int],
    expected: list[str],
) -> None:
    names = [c.name for c in compiled_example.fleet.clusters]
    events: list[str] = []
    results = {plan.cluster: ClusterResult(plan, {}, ()) for plan in compiled_example.plans}

    def compiled(
        fleet: ResolvedFleet,
        cluster: ResolvedCluster,
        previous: Steering | None,
        time_limit: float,
        explain: float,
        digested: bool,
    ) -> ClusterResult:
        events.append(f"compile {cluster.name}")
        return results[cluster.name]

    monkeypatch.setattr(per_cluster, "compile_cluster", compiled)
    cache = _RecordingCache(
        events, results, {names[i] for i in stored}, {names[i] for i in unreadable}
    )
    compiled_clusters = compile_clusters(
        compiled_example.fleet,
        {},
        cache,  # type: ignore[arg-type]
        10.0,
        10.0,
        StageTimings(),
    )
    for index, name in enumerate(names):
        events = [e.replace(name, str(index)) for e in events]
    assert events == expected
    assert [r.plan.cluster for r in compiled_clusters] == names


def _square_in(item: int) -> tuple[int, int]:
    return item * item, os.getpid()


def test_work_started_by_index_runs_in_workers_and_comes_back_by_index() -> None:
    with OrderedWork(_square_in, list(range(6)), 2) as work:
        for index in (4, 1, 5):
            work.start(index)
        results = work.results()
    assert {i: square for i, (square, _) in results.items()} == {1: 1, 4: 16, 5: 25}
    assert os.getpid() not in {pid for _, pid in results.values()}


def test_work_with_one_worker_runs_in_process_when_started() -> None:
    done: list[int] = []

    def record(item: int) -> int:
        done.append(item)
        return item

    with OrderedWork(record, [10, 20, 30], 1) as work:
        work.start(2)
        assert done == [30]
        work.start(0)
        assert work.results() == {2: 30, 0: 10}


def _die_on_zero(item: int) -> int:
    if item == 0:
        os._exit(3)
    return item


def test_a_worker_that_died_before_a_later_start_is_gf001() -> None:
    with pytest.raises(CompileError) as caught, OrderedWork(_die_on_zero, [0, 1], 2) as work:
        work.start(0)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # until the pool knows its worker is gone
            work.start(1)
            time.sleep(0.05)
    assert [d.code for d in caught.value.diagnostics] == ["GF001"]
    assert "a worker process died" in caught.value.diagnostics[0].message


@pytest.mark.parametrize("done_at", [3, None], ids=["done at its third call", "never done"])
def test_meanwhile_is_called_while_the_clusters_compile_until_it_is_done(
    monkeypatch: pytest.MonkeyPatch, compiled_example: Compiled, done_at: int | None
) -> None:
    """`meanwhile` (what the write would otherwise wait for) runs before the lookups and
    then every POLL seconds while the warm worker compiles, until it says it is done; one
    that never is does not hold the compile up once the clusters are compiled."""
    monkeypatch.setenv("GPUFLEET_WORKERS", "2")
    fleet = compiled_example.fleet
    calls: list[float] = []

    def meanwhile() -> bool:
        calls.append(time.monotonic())
        return len(calls) == done_at

    with warm_worker(True, lambda: time.sleep(0.3)) as warm:  # busy for 0.3 s at least
        assert warm is not None
        results = compile_clusters(fleet, {}, None, 10.0, 10.0, StageTimings(), warm, meanwhile)
    assert [r.files for r in results] == [
        r.files for r in compile_clusters(fleet, {}, None, 10.0, 10.0, StageTimings())
    ]
    if done_at is not None:
        assert len(calls) == done_at
    else:
        assert len(calls) > 0.2 / per_cluster.POLL  # called on while the worker warmed up
