"""Test-only helper for test_parallel: worker processes that fail, die or sleep on cue.

    python -m tests.worker_child emit-error -- ARGS...
        run `gpufleet ARGS...` with every admission policy costed over the API server's
        limits, so that emit raises GF701 (in a worker process when GPUFLEET_WORKERS > 1).
    python -m tests.worker_child map KIND
        run compiler.parallel.map_in_order over two items in two workers, whose second
        item fails as KIND says (`unpicklable`: an exception that cannot be rebuilt in the
        parent; `exit`: the worker process dies), printing `code: message` of the
        diagnostic it ends with, or `ok`.
    python -m tests.worker_child sleep -- ARGS...
        run `gpufleet ARGS...` with every cluster's solve sleeping a minute in its worker,
        printing `solving PID` from each worker as it starts.

Nothing here is imported by gpufleet; the hooks exist only inside this child process.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any


class TwoPartError(Exception):
    """An exception pickle cannot rebuild: its constructor takes two arguments."""

    def __init__(self, first: str, second: str) -> None:
        super().__init__(f"{first} {second}")


def _fail(item: int, kind: str) -> int:
    if item == 1 and kind == "unpicklable":
        raise TwoPartError("worker", "failed")
    if item == 1 and kind == "exit":
        os._exit(7)
    return item


def _map(kind: str) -> int:
    from compiler.diagnostics import CompileError
    from compiler.parallel import map_in_order

    os.environ["GPUFLEET_WORKERS"] = "2"
    try:
        print(map_in_order(lambda item: _fail(item, kind), [0, 1]) and "ok")
    except CompileError as error:
        print("\n".join(f"{d.code}: {d.message}" for d in error.diagnostics))
    return 0


def _emit_error() -> None:
    from compiler.cel.cost import PER_CALL_LIMIT
    from compiler.emit import admission
    from compiler.emit.admission_cost import PolicyCost

    over = PolicyCost({"variables.denied": 2 * PER_CALL_LIMIT}, 0, 0)
    admission.policy_cost = lambda rule: over  # type: ignore[assignment]


def _sleep() -> None:
    from compiler.solve import solver

    def sleeping(*args: Any, **kwargs: Any) -> Any:
        _nap("solving")
        raise AssertionError("not killed")

    solver.solve_cluster = sleeping  # type: ignore[assignment]


def _nap(what: str) -> None:
    sys.stdout.write(f"{what} {os.getpid()}\n")
    sys.stdout.flush()
    time.sleep(60)


def main(argv: list[str]) -> int:
    if argv[0] == "map":
        return _map(argv[1])
    {"emit-error": _emit_error, "sleep": _sleep}[argv[0]]()
    from compiler.cli import main as cli

    return cli(argv[2:])


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
