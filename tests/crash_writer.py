"""Test-only helper for test_crash_safety: write out/ in a child process that dies on cue.

    python -m tests.crash_writer write OUT TREE_JSON KILL_AT [fallback]
        write the tree with compiler.write.write_tree, SIGKILLing itself at the KILL_AT-th
        step (a step is just before or just after a file write, hard link, rename,
        exchange, rmtree, copy or mkdir); if there are fewer steps, exits 0 printing
        `steps N`. KILL_AT `aside` kills it just after out/ is moved aside, when out/ is
        missing. `fallback` makes renameat2 unavailable, as on a platform without it.
    python -m tests.crash_writer cli DELAY [GO] -- ARGS...
        run `gpufleet ARGS...` with DELAY seconds of sleep at each of those steps, printing
        `writing` once the first one is reached, so that a parent can kill it mid-write;
        with GO, it then waits at that step until the file GO exists.

Nothing here is imported by gpufleet; the hooks exist only inside this child process.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import compiler.write.atomic as atomic
import compiler.write.writer as writer


def _arm(kill_at: int, delay: float, go: Path | None = None) -> list[int]:
    count = [0]

    def step() -> None:
        count[0] += 1
        if count[0] == 1 and delay:
            sys.stdout.write("writing\n")
            sys.stdout.flush()
            while go is not None and not go.exists():
                time.sleep(0.01)
        if delay:
            time.sleep(delay)
        if count[0] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    def hooked(function: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            step()
            result = function(*args, **kwargs)
            step()
            return result

        return call

    os.link = hooked(os.link)
    writer.write_file = hooked(writer.write_file)
    shutil.rmtree = hooked(shutil.rmtree)  # type: ignore[assignment]
    shutil.copy2 = hooked(shutil.copy2)
    atomic.exchange = hooked(atomic.exchange)
    Path.rename = hooked(Path.rename)  # type: ignore[method-assign]
    Path.mkdir = hooked(Path.mkdir)  # type: ignore[method-assign]
    return count


def _kill_when_aside(out: Path) -> None:
    rename = Path.rename

    def renamed(self: Path, target: Path) -> Path:
        result = rename(self, target)
        if self == out.absolute():
            os.kill(os.getpid(), signal.SIGKILL)
        return result

    Path.rename = renamed  # type: ignore[method-assign,assignment]


def main(argv: list[str]) -> int:
    if argv[0] == "write":
        from compiler.write import write_tree

        out, tree_file = Path(argv[1]), Path(argv[2])
        tree = json.loads(tree_file.read_text(encoding="utf-8"))
        if argv[4:] == ["fallback"]:
            atomic.exchange = lambda first, second: False
        if argv[3] == "aside":
            _kill_when_aside(out)
        steps = _arm(0 if argv[3] == "aside" else int(argv[3]), 0.0)
        write_tree(out, tree)
        sys.stdout.write(f"steps {steps[0]}\n")
        return 0
    from compiler.cli import main as cli

    separator = argv.index("--")
    _arm(0, float(argv[1]), Path(argv[2]) if separator == 3 else None)
    return cli(argv[separator + 1 :])


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
