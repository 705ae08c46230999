"""What a whole in-process compile imports: for the tests that hold a library to being
imported only where it is used (Jinja2 for Argo CD's files, pathspec for CODEOWNERS)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO


def imported_by_compile(policies: Path, out: Path, modules: tuple[str, ...]) -> set[str]:
    """Which of `modules` a compile of `policies` into `out` has imported when it ends (one
    process, no workers and no cache, so that every stage runs in it)."""
    script = (
        "import sys\n"
        "from compiler.cli import main\n"
        f"code = main(['compile', '--policies', {str(policies)!r}, '--out', {str(out)!r}])\n"
        f"print(code, *[m for m in {modules!r} if m in sys.modules])\n"
    )
    env = {**os.environ, "GPUFLEET_WORKERS": "1", "GPUFLEET_NO_CACHE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, cwd=REPO
    )
    assert done.returncode == 0, done.stderr
    code, *found = done.stdout.splitlines()[-1].split()
    assert code == "0"
    return set(found)
