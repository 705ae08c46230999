"""The `gpufleet` process ends without freeing what it built (compiler.ending)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from compiler import ending
from tests.conftest import REPO

ENDS = """
import atexit
import sys
import weakref

from compiler import ending


class Big:
    pass


if sys.argv[1] == "keep":
    ending.keep_until_exit()
kept = Big()
ending.keep(kept)
watch = weakref.ref(kept, lambda _: sys.stdout.write("freed\\n"))  # called if freed
atexit.register(lambda: sys.stdout.write("exit handler ran\\n"))
del kept
sys.stdout.write("buffered, no line break")  # a pipe: block-buffered
sys.stderr.write("and on stderr")
ending.exit_process(3)
"""


@pytest.mark.parametrize("keeping", [True, False])
def test_the_process_ends_with_its_code_its_output_flushed_its_exit_handlers_run(
    keeping: bool,
) -> None:
    """exit_process: the code is the process's, what is buffered is written, the exit
    handlers run. What `keep` was given after keep_until_exit is not freed when the last
    other reference goes; without keep_until_exit it is."""
    script = [sys.executable, "-c", ENDS, "keep" if keeping else "do not keep"]
    done = subprocess.run(script, capture_output=True, text=True, cwd=REPO, check=False)
    assert done.returncode == 3
    freed = "" if keeping else "freed\n"
    assert done.stdout == f"{freed}buffered, no line breakexit handler ran\n"
    assert done.stderr == "and on stderr"


def test_keep_keeps_nothing_in_a_process_that_goes_on() -> None:
    """Where the command line runs inside another process (these tests), `keep` holds
    nothing: a compile's result is freed when the caller drops it."""
    assert ending._kept is None
    ending.keep(object())
    assert ending._kept is None


def test_gpufleet_exits_with_the_commands_code_and_all_its_output(tmp_path: Path) -> None:
    """The console entry point (compiler.launch) ends by exit_process: a compile's summary
    reaches a pipe whole and a usage error still exits 2."""
    out = tmp_path / "out"
    compiled = subprocess.run(
        [sys.executable, "-m", "compiler", "compile", "--policies", "policies", "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert compiled.returncode == 0, compiled.stderr
    assert compiled.stdout.startswith("compiled ") and compiled.stdout.endswith(f"in {out}\n")
    wrong = subprocess.run(
        [sys.executable, "-m", "compiler", "compile", "--no-such-option"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert wrong.returncode == 2
    assert "GF113" in wrong.stderr
