"""The `gpufleet` entry point (compiler.launch): the cycle collector stays off to the end."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO

REPORT_AT_EXIT = """if True:
    import atexit, gc, sys
    sys.path.insert(0, {repo!r})
    # atexit handlers run before CPython's last collection at shutdown
    atexit.register(
        lambda: sys.stderr.write(f"enabled={{gc.isenabled()}} frozen={{gc.get_freeze_count()}}\\n")
    )
    sys.argv = ["gpufleet", *{words!r}]
    from compiler.launch import run
    run()
"""


def _at_exit(*words: str) -> tuple[int, str]:
    """Run `gpufleet words...` through compiler.launch.run; its exit code and what the
    collector's state was when the process began to end."""
    script = REPORT_AT_EXIT.format(repo=str(REPO), words=list(words))
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    return done.returncode, done.stderr.strip().splitlines()[-1]


def test_the_objects_alive_at_exit_are_out_of_the_last_collections_reach() -> None:
    """CPython collects once more at shutdown even with the collector off; everything still
    alive when main returns is frozen first, so that scan has nothing to walk."""
    code, state = _at_exit("schema")
    frozen = int(state.split("frozen=")[1])
    assert (code, state.split()[0]) == (0, "enabled=False")
    assert frozen > 10_000  # the modules, pydantic's schemas, the command's output


def test_main_s_exit_code_is_the_process_s() -> None:
    """Freezing comes between main's return and the exit: the code still gets through."""
    code, state = _at_exit("check", "--policies", "/nonexistent/gpufleet-policies")
    assert code == 2 and "frozen=" in state
