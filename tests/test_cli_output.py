"""Exact stdout, stderr and exit code of the CLI for each format, kept beside the inputs.

Each directory of tests/cli_cases holds `policies/`, `args` (the command line) and one
`expected.<format>` per format. The command runs in that directory, so paths are relative and
stable. GITHUB_ACTIONS=true without --format must print exactly `expected.github`.
Set GPUFLEET_UPDATE_EXPECTED=1 to rewrite the expected files after an intended change.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

from compiler.diagnostics.formats import FORMATS
from tests.test_cli import Run

CASES = Path(__file__).resolve().parent / "cli_cases"
UPDATE = os.environ.get("GPUFLEET_UPDATE_EXPECTED") == "1"


def transcript(code: int, stdout: str, stderr: str) -> str:
    """What a run printed, in the layout of the expected files."""
    return f"exit {code}\n--- stdout\n{stdout}--- stderr\n{stderr}"


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.iterdir() if p.is_dir()))
@pytest.mark.parametrize("fmt", [*FORMATS, "auto-github"])
def test_cli_prints_exactly_the_expected_output(
    case: str, fmt: str, run_cli: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = CASES / case
    monkeypatch.chdir(directory)
    monkeypatch.setenv("COLUMNS", "80")  # argparse wraps its usage line to the terminal
    args = shlex.split((directory / "args").read_text())
    if fmt == "auto-github":
        monkeypatch.setenv("GITHUB_ACTIONS", "true")
        expected_file = directory / "expected.github"
    else:
        monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
        args += ["--format", fmt]
        expected_file = directory / f"expected.{fmt}"
    actual = transcript(*run_cli(*args))
    if UPDATE and fmt != "auto-github":
        expected_file.write_text(actual, encoding="utf-8")
    assert actual == expected_file.read_text(encoding="utf-8")
