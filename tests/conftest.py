"""Shared fixtures: the example fleet, a compiled copy of it, and policy trees made in tests."""

from __future__ import annotations

import contextlib
import os
import shutil
import textwrap
from collections.abc import Callable
from typing import Protocol
from pathlib import Path

import pytest
from hypothesis import settings

from compiler.cli import main
from compiler.diagnostics import CompileError
from compiler.migrate import migrate as run_migration
from compiler.pipeline import Compiled, compile_policies
from compiler.report.previous import read_previous_plans
from compiler.solve import ClusterPlan

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "policies"

collect_ignore = [] if os.environ.get("GPUFLEET_E2E") else ["e2e"]
"""The real-cluster suite (tests/e2e) runs with `make e2e` (GPUFLEET_E2E=1), not `make test`."""

settings.register_profile("suite", derandomize=True, database=None)
"""`make test`: the same examples on every run and machine, so the suite's verdict and time
are reproducible (a random draw once took the brute-force oracle minutes)."""
settings.register_profile("explore", derandomize=False)
"""Campaigns (GPUFLEET_HYPOTHESIS=explore with more examples): new random draws each run."""
settings.load_profile(os.environ.get("GPUFLEET_HYPOTHESIS", "suite"))


def committed_plans() -> dict[str, ClusterPlan]:
    """The plans in the committed out/: what compiling the example starts from."""
    return read_previous_plans(REPO / "out")[0]


@pytest.fixture(scope="session")
def compiled_example() -> Compiled:
    """The example fleet compiled in memory once per session, over the committed plans."""
    return compile_policies(EXAMPLE, previous=read_previous_plans(REPO / "out")[0])


@pytest.fixture
def policy_copy(tmp_path: Path) -> Path:
    """A private copy of the example policies that a test may edit."""
    target = tmp_path / "policies"
    shutil.copytree(EXAMPLE, target)
    return target


class PolicyWriter(Protocol):
    """`write_policies(files, migrate=True)`."""

    def __call__(self, files: dict[str, str], migrate: bool = True) -> Path: ...


@pytest.fixture
def write_policies(tmp_path: Path) -> PolicyWriter:
    """Write {relative path: YAML text} into a fresh policies/ directory and return it.

    Most tests write a team as one Team document that says everything (the layout before
    grants), because that reads as the fleet the test is about; `gpufleet migrate` then moves
    each such team's entitlements into its grant, as a user's fleet would be migrated, so
    every one of these trees also exercises the migration. `migrate=False` writes the files
    exactly as given (a tree that is not valid policy is left as written either way).
    """

    def write(files: dict[str, str], migrate: bool = True) -> Path:
        root = tmp_path / "policies"
        shutil.rmtree(root, ignore_errors=True)
        for relative, text in files.items():
            target = root / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
        if migrate:
            with contextlib.suppress(CompileError):
                run_migration(root)
        return root

    return write


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """Run `gpufleet ARGS...` in process; returns (exit code, stdout, stderr)."""

    def run(*args: str | Path) -> tuple[int, str, str]:
        try:
            code = main([str(a) for a in args])
        except SystemExit as exit_:
            code = int(exit_.code or 0)
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run
