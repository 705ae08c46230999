"""End to end, as in a pull request: a copy of the repository, one team's guarantee changed."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.test_cli import Run, snapshot_tree

IGNORED = shutil.ignore_patterns(".venv", ".git", "*cache*", "__pycache__", "*.egg-info")


def test_a_guarantee_change_from_check_to_diff_to_compile(
    run_cli: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(REPO, repo, ignore=IGNORED)
    monkeypatch.chdir(repo)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    assert run_cli("compile", "--check")[0] == 0

    grant = repo / "policies" / "grants" / "ml-research.yaml"
    grant.write_text(grant.read_text().replace("guaranteed: 64", "guaranteed: 56"))
    code, _, err = run_cli("compile", "--check")
    assert code == 1 and "error[GF501]" in err

    code, diff, _ = run_cli("diff")
    assert code == 0
    objects = re.findall(r"^# ([\w-]+): (added|changed|removed) (.+)$", diff, re.MULTILINE)
    assert sorted(objects) == [
        ("fleet", "changed", "report"),
        ("prod-east", "changed", "ClusterQueue ml-research"),  # Kueue: nominal quota
        ("prod-east", "changed", "Cohort prod-east"),  # Kueue: the cohort's headroom
        ("prod-east", "changed", "plan prod-east"),
        ("prod-west", "changed", "plan prod-west"),
    ]
    where = "guarantee of team ml-research in namespace ml-research, tier training: 64 -> 56"
    assert diff.startswith(
        "# What can hurt, most severe first:\n"
        f"#   prod-east: {where} devices (-8)\n"
        f"#   prod-west: {where} devices (-8)\n"
        "# prod-east: 3 changed\n# prod-west: 1 changed\n# fleet: 1 changed\n"
    )
    assert '-              nominalQuota: "64"\n-              borrowingLimit: "32"\n' in diff
    assert '-      "guaranteed": 64,\n-      "headroom": 64,\n+      "guaranteed": 56,\n' in diff
    assert '-      "b200/gpu": 64\n+      "b200/gpu": 56\n' in diff
    assert "-| ml-research | training (10000), batch (100) | prod-east | ml-research" in diff

    hand_made = repo / "out" / "clusters" / "prod-east" / "NOTES.md"
    hand_made.write_text("kept by hand\n")
    before = snapshot_tree(repo / "out")
    code, _, err = run_cli("compile")
    assert code == 0, err
    assert "out/clusters/prod-east/NOTES.md is not gpufleet's; left as it is" in err
    after = snapshot_tree(repo / "out")
    assert hand_made.read_text() == "kept by hand\n"
    assert {p for p in after if after[p] != before.get(p)} == {
        "clusters/prod-east/_cluster/clusterqueue_ml-research.yaml",
        "clusters/prod-east/_cluster/cohort_prod-east.yaml",
        "plan/prod-east.json",
        "plan/prod-west.json",
        "report.md",
    }
    assert run_cli("compile", "--check")[0] == 0
    assert run_cli("diff")[1] == "out is up to date: a compile changes nothing\n"
