"""`gpufleet diff` on the two most common pull requests, a new tier or team (files added) and a
team leaving (files removed), and on an empty or missing out/: each printed a KeyError on the
ownership list and exited 3 (issue 18's first finding, a crash)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.test_cli import Run

TIER = """apiVersion: gpufleet.dev/v1alpha1
kind: GpuTier
metadata: {name: spare}
spec: {select: {models: [H100]}}
"""


@pytest.fixture
def repo(example_repo: Path) -> Path:
    """The example repository (conftest.example_repo)."""
    return example_repo


def changes(diff: str) -> list[tuple[str, str, str]]:
    return re.findall(r"^# ([\w-]+): (added|changed|removed) (.+)$", diff, re.MULTILINE)


def test_a_new_tier_is_shown_as_added_files(repo: Path, run_cli: Run) -> None:
    (repo / "policies" / "tiers" / "spare.yaml").write_text(TIER)
    code, diff, err = run_cli("diff")
    assert code == 0, err
    found = changes(diff)
    assert ("prod-east", "added", "DeviceClass spare") in found
    assert ("fleet", "changed", "ownership list") in found
    applied = _applies(repo, diff)
    assert applied.returncode == 0, applied.stderr


def test_a_team_leaving_is_shown_as_removed_files(repo: Path, run_cli: Run) -> None:
    (repo / "policies" / "teams" / "llm-serving.yaml").unlink()
    (repo / "policies" / "grants" / "llm-serving.yaml").unlink()
    code, diff, err = run_cli("diff")
    assert code == 0, err
    removed = [c for c in changes(diff) if c[1] == "removed"]
    assert ("prod-east", "removed", "Namespace /llm-serving") in removed or any(
        "llm-serving" in label for _, _, label in removed
    ), removed


@pytest.mark.parametrize("state", ["empty", "missing"])
def test_an_empty_or_missing_out_is_all_added(repo: Path, run_cli: Run, state: str) -> None:
    shutil.rmtree(repo / "out")
    if state == "empty":
        (repo / "out").mkdir()
    code, diff, err = run_cli("diff")
    assert code == 0, err
    found = changes(diff)
    assert found and all(status == "added" for _, status, _ in found)
    assert ("fleet", "added", "ownership list") in found


def _applies(repo: Path, diff: str) -> subprocess.CompletedProcess[str]:
    """`git apply --check` of the diff (paths relative to out/) in a scratch repository."""
    subprocess.run(["git", "init", "-q"], cwd=repo / "out", check=True)
    return subprocess.run(
        ["git", "apply", "--check", "-"],
        cwd=repo / "out",
        input=diff,
        text=True,
        capture_output=True,
    )
