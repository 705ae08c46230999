"""Wall-clock time per pipeline stage, for `--timings` and the benchmarks."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager


class StageTimings:
    """Seconds spent in each stage, in the order the stages ran."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the enclosed block as stage `name` (added up if it runs more than once)."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start

    def line(self) -> str:
        """`load 0.120s, model 0.030s, ...`."""
        return ", ".join(f"{name} {value:.3f}s" for name, value in self.seconds.items())


def print_timings(timings: StageTimings, asked: bool) -> None:
    """Print `timings: load 0.120s, ...` to stderr when `--timings` asked for it."""
    if asked:
        sys.stderr.write(f"timings: {timings.line()}\n")


NO_TIMINGS = StageTimings()
"""A sink for callers that do not ask for timings."""
