"""Run independent per-cluster work on every core, with results in the input's order.

Clusters are solved and rendered independently, so a fleet of many clusters uses all cores:
worker processes are forked after resolve (they inherit the resolved fleet, nothing is sent
to them) and send back plain results. Small fleets run in-process, where a pool would only
cost its start-up. Output is the same bytes either way: results are gathered in order.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

MIN_CLUSTERS_FOR_WORKERS = 8
"""Below this many clusters the work runs in-process."""

_TASK: tuple[Callable[[Any], Any], Sequence[Any]] | None = None


def worker_count(items: int) -> int:
    """Processes to use: GPUFLEET_WORKERS if set, else the CPUs for large fleets, else 1."""
    configured = os.environ.get("GPUFLEET_WORKERS", "")
    if configured.isdigit() and int(configured) > 0:
        return min(int(configured), items)
    if items < MIN_CLUSTERS_FOR_WORKERS or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return max(1, min(os.cpu_count() or 1, items))


def _run(index: int) -> Any:
    assert _TASK is not None
    function, items = _TASK
    return function(items[index])


def map_in_order(function: Callable[[Item], Result], items: Sequence[Item]) -> list[Result]:
    """`[function(i) for i in items]`, spread over worker processes when that pays off.

    `function` must return picklable results; exceptions are the caller's to turn into
    results first (a worker's exception would lose its diagnostics).
    """
    workers = worker_count(len(items))
    if workers <= 1:
        return [function(item) for item in items]
    global _TASK
    _TASK = (function, items)
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            return pool.map(_run, range(len(items)), chunksize=1)
    finally:
        _TASK = None
