"""The `gpufleet` entry point (compiler.launch): the cycle collector stays off to the end,
which comes by compiler.ending.exit_process with main's code."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO

REPORT_AT_EXIT = """if True:
    import gc, sys
    sys.path.insert(0, {repo!r})
    from compiler import ending

    exit_process = ending.exit_process

    def reporting(code):
        sys.stderr.write(f"enabled={{gc.isenabled()}} code={{code}}\\n")
        exit_process(code)

    ending.exit_process = reporting
    sys.argv = ["gpufleet", *{words!r}]
    from compiler.launch import run

    gc.callbacks.append(lambda phase, info: phase == "start" and sys.stderr.write("collected\\n"))
    run()
"""


def _at_exit(*words: str) -> tuple[int, str, str]:
    """Run `gpufleet words...` through compiler.launch.run; its exit code, the collector's
    state and main's code as the process began to end, and all it wrote to stderr."""
    script = REPORT_AT_EXIT.format(repo=str(REPO), words=list(words))
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    return done.returncode, done.stderr.strip().splitlines()[-1], done.stderr


def test_the_collector_never_runs_from_start_to_end() -> None:
    """The collector is off for the whole run, its end included: no collection ever starts,
    and the process ends by exit_process (no interpreter teardown, no last collection)."""
    code, state, stderr = _at_exit("schema")
    assert (code, state) == (0, "enabled=False code=0")
    assert "collected" not in stderr


def test_main_s_exit_code_is_the_process_s() -> None:
    """The code main returns is the process's exit code."""
    code, state, _ = _at_exit("check", "--policies", "/nonexistent/gpufleet-policies")
    assert (code, state) == (2, "enabled=False code=2")
