"""The scheduled drift workflow (examples/github-actions/gpufleet-drift.yml) and its read-only
RBAC (drift-rbac.yaml): its steps run as the runner runs them (bash, a fake `kubectl` and
`gh`, the real gpufleet), and the role grants reading the three kinds drift reads, nothing
else (tests/e2e/test_drift.py uses it on a real kube-apiserver)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import REPO
from tests.test_ci_integration import INSTALL, gpufleet_commands, parses

EXAMPLES = REPO / "examples" / "github-actions"
WORKFLOW = EXAMPLES / "gpufleet-drift.yml"
RBAC = EXAMPLES / "drift-rbac.yaml"
EAST = REPO / "tests" / "fixtures" / "inventory" / "k137-prod-east.yaml"


def _steps() -> dict[str, dict[str, Any]]:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    return {step["name"]: step for step in workflow["jobs"]["drift"]["steps"] if "name" in step}


def _bin(tmp_path: Path, **scripts: str) -> str:
    """A PATH with fake commands (each logs its arguments to $CALLS) before the real ones, and
    this interpreter's gpufleet."""
    directory = tmp_path / "bin"
    directory.mkdir(exist_ok=True)
    for name, script in scripts.items():
        (directory / name).write_text(script)
        (directory / name).chmod(0o755)
    return f"{directory}:{Path(sys.executable).parent}:{os.environ['PATH']}"


def _bash(script: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-e", "-c", script], env=env, cwd=cwd, capture_output=True, text=True
    )


def test_the_workflow_runs_on_a_schedule_with_read_only_rights() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    assert workflow[True]["schedule"][0]["cron"] and "workflow_dispatch" in workflow[True]
    assert workflow["permissions"] == {"contents": "read", "issues": "write"}
    steps = _steps()
    (install,) = [s["run"] for s in steps.values() if "pip install" in s.get("run", "")]
    assert INSTALL.fullmatch(install.strip())
    commands = gpufleet_commands([s.get("run", "") for s in steps.values()])
    assert commands == [
        'gpufleet drift --dump "$RUNNER_TEMP/dump.yaml" --cluster "$CLUSTER" --format markdown'
    ]
    assert parses(commands[0].replace('"', ""))


def test_the_role_reads_the_three_kinds_and_nothing_else() -> None:
    documents = {d["kind"]: d for d in yaml.safe_load_all(RBAC.read_text())}
    rules = documents["ClusterRole"]["rules"]
    granted = {
        (group, resource, verb)
        for rule in rules
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }
    assert granted == {
        (group, resource, verb)
        for group, resource in [
            ("", "nodes"),
            ("resource.k8s.io", "resourceslices"),
            ("resource.k8s.io", "devicetaintrules"),
        ]
        for verb in ("get", "list")
    }
    binding = documents["ClusterRoleBinding"]
    (subject,) = binding["subjects"]
    account = documents["ServiceAccount"]["metadata"]
    assert (subject["name"], subject["namespace"]) == (account["name"], account["namespace"])
    assert binding["roleRef"]["name"] == documents["ClusterRole"]["metadata"]["name"]


FAKE_KUBECTL = """#!/bin/sh
echo "$*" >> "$CALLS"
case "$1" in
  api-resources) printf '%s\\n' resourceslices.resource.k8s.io $SERVED ;;
  get) cat "$DUMP" ;;
esac
"""


@pytest.mark.parametrize(
    ("served", "kinds"),
    [
        ("devicetaintrules.resource.k8s.io", "nodes,resourceslices,devicetaintrules"),
        ("", "nodes,resourceslices"),
    ],
)
def test_the_dump_asks_only_for_what_the_cluster_serves(
    tmp_path: Path, served: str, kinds: str
) -> None:
    calls = tmp_path / "calls"
    env = {
        "PATH": _bin(tmp_path, kubectl=FAKE_KUBECTL),
        "RUNNER_TEMP": str(tmp_path),
        "KUBECONFIG_DATA": "apiVersion: v1",
        "CALLS": str(calls),
        "DUMP": str(EAST),
        "SERVED": served,
    }
    done = _bash(_steps()["Dump the cluster"]["run"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert calls.read_text().splitlines()[-1] == f"get {kinds} -o yaml"
    assert (tmp_path / "dump.yaml").read_text() == EAST.read_text()
    assert not (tmp_path / "kubeconfig").exists()  # the credentials do not outlive the step


def test_the_drift_step_writes_the_report_and_its_status(tmp_path: Path) -> None:
    (tmp_path / "dump.yaml").write_text(EAST.read_text())
    output, summary = tmp_path / "output", tmp_path / "summary"
    env = {
        "PATH": _bin(tmp_path),
        "RUNNER_TEMP": str(tmp_path),
        "CLUSTER": "prod-east",
        "GITHUB_OUTPUT": str(output),
        "GITHUB_STEP_SUMMARY": str(summary),
        "HOME": os.environ.get("HOME", str(tmp_path)),
    }
    done = _bash(_steps()["gpufleet drift"]["run"], env, REPO)
    assert done.returncode == 0, done.stderr
    # the fixture's XID taint and lost GPU: drift that keeps every guarantee
    assert output.read_text() == "status=1\n"
    report = (tmp_path / "drift.md").read_text()
    assert report.startswith("<!-- gpufleet-drift:prod-east -->\n")
    assert summary.read_text() == report
    assert "error[GF826]" in done.stderr


FAKE_GH = """#!/bin/sh
echo "$*" >> "$CALLS"
case "$1 $2" in
  "issue list") test -n "$EXISTING" && echo "$EXISTING" ;;
esac
exit 0
"""


@pytest.mark.parametrize(
    ("status", "existing", "expected"),
    [
        (
            "1",
            "",
            ["issue create --repo acme/fleet --title Cluster prod-east drifts from its policy"],
        ),
        ("2", "12", ["issue edit 12 --repo acme/fleet --body-file"]),
        ("0", "12", ["issue comment 12", "issue close 12"]),
        ("0", "", []),
        ("3", "", []),  # no report: nothing to post (the next step fails the job)
    ],
)
def test_one_issue_per_cluster_opens_follows_and_closes_with_the_drift(
    tmp_path: Path, status: str, existing: str, expected: list[str]
) -> None:
    if status != "3":
        (tmp_path / "drift.md").write_text("<!-- gpufleet-drift:prod-east -->\n## Drift\n")
    calls = tmp_path / "calls"
    env = {
        "PATH": _bin(tmp_path, gh=FAKE_GH),
        "RUNNER_TEMP": str(tmp_path),
        "CLUSTER": "prod-east",
        "GITHUB_REPOSITORY": "acme/fleet",
        "STATUS": status,
        "EXISTING": existing,
        "CALLS": str(calls),
    }
    done = _bash(_steps()["Open, update or close the cluster's drift issue"]["run"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    listing, *writes = calls.read_text().splitlines()
    assert listing.startswith("issue list --repo acme/fleet --state open")
    assert len(writes) == len(expected)
    for write, start in zip(writes, expected, strict=True):
        assert write.startswith(start), write


def test_the_job_fails_unless_drift_exits_0_or_1() -> None:
    condition = _steps()["Fail when a guarantee no longer holds or drift could not run"]["if"]
    assert condition == "steps.drift.outputs.status != '0' && steps.drift.outputs.status != '1'"
