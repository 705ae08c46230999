"""Run independent per-cluster work on every core, with results in the input's order.

Clusters are solved and rendered independently, so a fleet of many clusters uses all cores:
worker processes are forked after resolve (they inherit the resolved fleet, nothing is sent
to them) and send back plain results. Small fleets run in-process, where a pool would only
cost its start-up. Output is the same bytes either way: results are gathered in order.

Workers never outlive gpufleet (they die with it, even when it is SIGKILLed), and a worker
that fails never hangs it: its CompileError comes back whole, and anything else (an
exception, a worker killed by the kernel) is GF001.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager, suppress
from typing import Any, Generic, TypeVar

from compiler.diagnostics import CompileError, fail
from compiler.lifetime import PARENT_POLL, die_with_parent

Item = TypeVar("Item")
Result = TypeVar("Result")

MIN_CLUSTERS_FOR_WORKERS = 8
"""Below this many clusters the work runs in-process."""

_TASK: tuple[Callable[[Any], Any], Sequence[Any]] | None = None


class WorkerError(Exception):
    """An unexpected exception in a worker process, as text (its type may not unpickle)."""

    def __init__(self, message: str, trace: str) -> None:
        super().__init__(message, trace)
        self.message = message
        self.trace = trace


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
    try:
        return function(items[index])
    except CompileError:
        raise
    except Exception as error:
        raise WorkerError(f"{type(error).__name__}: {error}", traceback.format_exc()) from None


class OrderedWork(Generic[Item, Result]):
    """`function(items[i])` for each index started, spread over `workers` processes when
    there are more than one, with the results gathered by index.

    The workers are forked at the first start: they inherit everything the parent holds then,
    `items` included, and are sent only indices, so the parent can go on deciding what else to
    start while they work. With one worker each start runs in-process, there and then. Use it
    as a context manager: leaving it stops the workers, finished or not.
    """

    def __init__(
        self, function: Callable[[Item], Result], items: Sequence[Item], workers: int
    ) -> None:
        self.function = function
        self.items = items
        self.workers = workers
        self._done: dict[int, Result] = {}
        self._pending: dict[int, Future[Result]] = {}
        self._pool: ProcessPoolExecutor | None = None

    def __enter__(self) -> OrderedWork[Item, Result]:
        return self

    def __exit__(self, *exc: object) -> None:
        global _TASK
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
            _TASK = None

    def start(self, index: int) -> None:
        """Compute `function(items[index])`: now in-process, or in a worker."""
        global _TASK
        if self.workers <= 1:
            self._done[index] = self.function(self.items[index])
            return
        if self._pool is None:
            assert _TASK is None, "one OrderedWork with workers at a time"
            _TASK = (self.function, self.items)
            self._pool = ProcessPoolExecutor(
                self.workers,
                multiprocessing.get_context("fork"),
                initializer=die_with_parent,
                initargs=(os.getpid(),),
            )
        with _failures_as_diagnostics():  # a worker that died already breaks the pool
            self._pending[index] = self._pool.submit(_run, index)

    def done(self, timeout: float) -> bool:
        """Whether every started index is done, waiting `timeout` seconds at most for it."""
        pending = list(self._pending.values())
        return not pending or not wait(pending, timeout).not_done

    def results(self) -> dict[int, Result]:
        """Every started index's result, once all are done. A CompileError raised in a worker
        is raised here as in-process (the first in the indices' order); any other failure is
        GF001."""
        with _failures_as_diagnostics():
            for index in sorted(self._pending):
                self._done[index] = self._pending.pop(index).result()
        return self._done


class WarmWorker:
    """One worker process forked before its task exists, so that it warms up (imports and
    compiles what a freshly forked worker would at its first task) while the parent goes
    on; it is then sent one task, its function and arguments pickled.

    For work that will redo few items (a compile with the cache in use): the first item to
    redo goes to a process that is ready for it, where a worker forked once the item is known
    would first spend longer warming up than on the item. Use it as a context manager
    (warm_worker): leaving it stops the process, finished or not.
    """

    def __init__(self, warm_up: Callable[[], None]) -> None:
        context = multiprocessing.get_context("fork")
        self._connection, theirs = context.Pipe()
        self._process = context.Process(
            target=_serve_one, args=(theirs, os.getpid(), warm_up), daemon=True
        )
        self._process.start()
        theirs.close()
        self.taken = False
        """Whether it has been sent its task."""

    def take(self, function: Callable[..., Result], *args: Any) -> None:
        """Send it `function(*args)` (its one task)."""
        assert not self.taken, "a warm worker takes one task"
        self.taken = True
        with _failures_as_diagnostics():
            try:
                self._connection.send((function, args))
            except OSError as error:  # it is gone
                raise BrokenProcessPool(f"the warm worker is gone: {error}") from None

    def ready(self, timeout: float) -> bool:
        """Whether its task's result has come, waiting `timeout` seconds at most for it."""
        try:
            return self._connection.poll(timeout)
        except (EOFError, OSError):
            return True  # result() says what became of it

    def result(self) -> Any:
        """Its task's result. A CompileError raised there is raised here as in-process; any
        other failure is GF001."""
        with _failures_as_diagnostics():
            try:
                raised, value = self._connection.recv()
            except (EOFError, OSError):
                self._process.join(PARENT_POLL)
                code = self._process.exitcode
                raise BrokenProcessPool(f"the warm worker ended (exit code {code})") from None
            if raised:
                raise value
            return value

    def stop(self) -> None:
        """End the process, whatever it is doing (it writes nothing: it only sends back)."""
        self._connection.close()
        if self._process.is_alive():
            self._process.kill()
        self._process.join()


def _serve_one(
    connection: multiprocessing.connection.Connection,
    parent: int,
    warm_up: Callable[[], None],
) -> None:
    """The warm worker: warm up, then run the one task sent and send back (raised, value)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's: it stops this one
    die_with_parent(parent)
    with suppress(Exception):  # the task meets the same failure again, and reports it
        warm_up()
    try:
        function, args = connection.recv()
    except EOFError:  # no task came
        return
    try:
        outcome: tuple[bool, Any] = (False, function(*args))
    except CompileError as error:
        outcome = (True, error)
    except Exception as error:
        outcome = (True, WorkerError(f"{type(error).__name__}: {error}", traceback.format_exc()))
    connection.send(outcome)


@contextmanager
def warm_worker(wanted: bool, warm_up: Callable[[], None]) -> Iterator[WarmWorker | None]:
    """A WarmWorker running `warm_up`, when `wanted` and a fleet large enough for workers
    would get more than one (worker_count: several CPUs and fork, or GPUFLEET_WORKERS over
    1); else None."""
    if not wanted or worker_count(MIN_CLUSTERS_FOR_WORKERS) <= 1:
        yield None
        return
    worker = WarmWorker(warm_up)
    try:
        yield worker
    finally:
        worker.stop()


@contextmanager
def _failures_as_diagnostics() -> Iterator[None]:
    """GF001 for an exception in a worker or a worker that died."""
    try:
        yield
    except WorkerError as error:
        if os.environ.get("GPUFLEET_DEBUG"):
            sys.stderr.write(error.trace)
        raise _internal(f"internal error in a worker process: {error.message}") from None
    except BrokenProcessPool as error:
        cause = f" ({error.__cause__})" if error.__cause__ else ""
        raise _internal(f"internal error: a worker process died{cause}: {error}") from None


def map_in_order(function: Callable[[Item], Result], items: Sequence[Item]) -> list[Result]:
    """`[function(i) for i in items]`, spread over worker processes when that pays off.

    `function` must return picklable results. A CompileError raised in a worker is raised
    here as in-process (the first in the items' order); any other failure is GF001.
    """
    with OrderedWork(function, items, worker_count(len(items))) as work:
        for index in range(len(items)):
            work.start(index)
        results = work.results()
    return [results[index] for index in range(len(items))]


def _internal(message: str) -> CompileError:
    return fail(
        "GF001",
        message,
        None,
        "please report this with the policy that caused it; GPUFLEET_DEBUG=1 prints the "
        "worker's traceback",
    )
