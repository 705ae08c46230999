"""Shared fixtures: the example fleet, a compiled copy of it, and policy trees made in tests."""

from __future__ import annotations

import datetime
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import pytest
from hypothesis import settings

import compiler.commands
from compiler.cli import main
from compiler.ir import Steering
from compiler.pipeline import Compiled, compile_policies
from compiler.report.previous import read_previous_steering
from tests.fleets import write_tree
from tests.plan_checker import check_written_plans

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "policies"

collect_ignore = [] if os.environ.get("GPUFLEET_E2E") else ["e2e"]
"""The real-cluster suite (tests/e2e) runs with `make e2e` (GPUFLEET_E2E=1), not `make test`."""

os.environ.setdefault(
    "GPUFLEET_FUZZ_SEED", f"ci-{datetime.datetime.now(datetime.UTC).date().isoformat()}"
)
"""The fuzz profile's rotating seed (tests/fuzz/test_fuzz_pipeline.py): today's (UTC) unless
set, to run a failure's cases again. It names a test, and every pytest-xdist worker must
collect the same tests: it is fixed here, in the process that starts them (they inherit its
environment), so a run across midnight does not give two workers two days."""

settings.register_profile("suite", derandomize=True, database=None)
"""`make test`: the same examples on every run and machine, so the suite's verdict and time
are reproducible (a random draw once took the brute-force oracle minutes)."""
settings.register_profile("explore", derandomize=False)
"""Campaigns (GPUFLEET_HYPOTHESIS=explore with more examples): new random draws each run."""
settings.load_profile(os.environ.get("GPUFLEET_HYPOTHESIS", "suite"))


def committed_steering() -> dict[str, Steering]:
    """What steers of the plans in the committed out/: what compiling the example starts
    from."""
    return read_previous_steering(REPO / "out")[0]


@pytest.fixture(scope="session")
def compiled_example() -> Compiled:
    """The example fleet compiled in memory once per session, over the committed plans."""
    return compile_policies(EXAMPLE, previous=read_previous_steering(REPO / "out")[0])


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times the CLI compiled in full (one entry per compile)."""
    calls: list[int] = []
    real = compiler.commands.compile_as_compile_would

    def counted(*args: object, **kwargs: object) -> Compiled:
        calls.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(compiler.commands, "compile_as_compile_would", counted)
    return calls


@pytest.fixture(autouse=True)
def no_compile_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs without the compile cache (GPUFLEET_NO_CACHE=1), so that a test that
    patches the compiler in process is never answered from a record of the unpatched code,
    and nothing is written to ~/.cache; tests/test_compile_cache.py turns it back on."""
    monkeypatch.setenv("GPUFLEET_NO_CACHE", "1")


@pytest.fixture
def policy_copy(tmp_path: Path) -> Path:
    """A private copy of the example policies that a test may edit."""
    target = tmp_path / "policies"
    shutil.copytree(EXAMPLE, target)
    copy_codeowners(tmp_path)
    return target


@pytest.fixture
def example_repo(policy_copy: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository holding a copy of the example policies and its committed out/, as the
    working directory (so the CLI's defaults find them), outside GitHub Actions."""
    repository = policy_copy.parent
    shutil.copytree(REPO / "out", repository / "out")
    monkeypatch.chdir(repository)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    return repository


def copy_codeowners(repository: Path) -> None:
    """The example's CODEOWNERS into a copy whose policies/ is `repository`/policies (the
    example fleet declares owners, so check fails without it)."""
    (repository / ".github").mkdir(exist_ok=True)
    shutil.copy(REPO / ".github" / "CODEOWNERS", repository / ".github" / "CODEOWNERS")


class PolicyWriter(Protocol):
    """`write_policies(files, migrate=True)`."""

    def __call__(self, files: dict[str, str], migrate: bool = True) -> Path: ...


@pytest.fixture
def write_policies(tmp_path: Path) -> PolicyWriter:
    """Write {relative path: YAML text} into a fresh policies/ directory and return it
    (`fleets.write_tree`: teams in the layout before grants are migrated unless
    `migrate=False`)."""

    def write(files: dict[str, str], migrate: bool = True) -> Path:
        root = tmp_path / "policies"
        shutil.rmtree(root, ignore_errors=True)
        return write_tree(root, files, migrate)

    return write


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """Run `gpufleet ARGS...` in process; returns (exit code, stdout, stderr)."""

    def run(*args: str | Path) -> tuple[int, str, str]:
        argv = [str(a) for a in args]
        try:
            code = main(argv)
        except SystemExit as exit_:
            code = int(exit_.code or 0)
        captured = capsys.readouterr()
        if code == 0:
            assert_written_plans_hold(argv)
        return code, captured.out, captured.err

    return run


def assert_written_plans_hold(argv: list[str]) -> None:
    """After `gpufleet ARGV` succeeded: if it was a compile that wrote out/, every plan it
    wrote holds by the independent checker (tests/plan_checker.py), judged against the
    policies it compiled."""
    if not argv or argv[0] != "compile" or "--check" in argv:
        return
    policies = Path(_option(argv, "--policies", "policies"))
    problems = check_written_plans(policies, Path(_option(argv, "--out", "out")))
    assert problems == [], f"gpufleet {' '.join(argv)} wrote plans that do not hold: {problems}"


def _option(argv: list[str], name: str, default: str) -> str:
    """The value of option `name` (`--name VALUE` or `--name=VALUE`), else its default."""
    for index, arg in enumerate(argv):
        if arg == name and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return default
