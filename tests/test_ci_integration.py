"""The pre-commit hooks and the example GitHub Actions workflow run real gpufleet commands."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from pathlib import Path
from typing import Any, cast

import pytest
import yaml

from compiler.cli import _parser
from tests.conftest import REPO
from tests.test_cli import Run

HOOK_KEYS = {  # the hook manifest fields pre-commit documents (https://pre-commit.com/#new-hooks)
    "id", "name", "entry", "language", "files", "exclude", "types", "types_or",
    "exclude_types", "always_run", "fail_fast", "verbose", "pass_filenames", "require_serial",
    "description", "language_version", "minimum_pre_commit_version", "args", "stages",
}  # fmt: skip


def parses(command: str) -> bool:
    """Whether a `gpufleet ...` command line is one the CLI accepts."""
    words = shlex.split(command)
    assert words[0] == "gpufleet", command
    _parser().parse_args(words[1:])
    return True


def test_pre_commit_hooks_run_check_and_compile_check() -> None:
    hooks: list[dict[str, Any]] = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert [h["id"] for h in hooks] == ["gpufleet-check", "gpufleet-compile-check"]
    assert [h["entry"] for h in hooks] == ["gpufleet check", "gpufleet compile --check"]
    for hook in hooks:
        assert {"id", "name", "entry", "language"} <= hook.keys() <= HOOK_KEYS, hook
        assert hook["language"] == "python" and hook["pass_filenames"] is False
        assert re.compile(hook["files"]).match("policies/teams/a.yaml")
        assert parses(hook["entry"])


GITHUB_WORKFLOW = REPO / "examples" / "github-actions" / "gpufleet.yml"
GITLAB_PIPELINE = REPO / "examples" / "gitlab-ci" / ".gitlab-ci.yml"
INSTALL = re.compile(r'pip install "git\+https://\S+@v\d+\.\d+\.\d+"')


def gpufleet_commands(scripts: list[str]) -> list[str]:
    """Every `gpufleet ...` command line of the scripts, up to a redirection or `||`."""
    return [
        found.group(0).strip()
        for script in scripts
        for line in script.splitlines()
        if (found := re.search(r"\bgpufleet (?!found)[^>\\|]*", line))
        and not line.lstrip().startswith("#")
    ]


def test_the_workflow_checks_compiles_and_posts_the_report() -> None:
    workflow = yaml.safe_load(GITHUB_WORKFLOW.read_text())
    assert workflow[True]["pull_request"]["paths"] == ["policies/**", "out/**"]  # `on:` is True
    assert workflow["permissions"]["pull-requests"] == "write"
    assert workflow["permissions"]["security-events"] == "write"
    (job,) = workflow["jobs"].values()
    steps = job["steps"]
    scripts = [step["run"] for step in steps if "run" in step]
    commands = gpufleet_commands(scripts)
    assert commands == [
        "gpufleet check --format sarif",
        "gpufleet compile --check",
        'gpufleet report --format text --previous "$RUNNER_TEMP/base/out"',
    ]
    assert all(parses(command) for command in commands)
    (install,) = [s for s in scripts if "pip install" in s]
    assert INSTALL.fullmatch(install.strip())
    # SARIF goes to code scanning, whatever the check found
    (upload,) = [s for s in steps if str(s.get("uses", "")).startswith("github/codeql-action/")]
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert upload["if"] == "always()" and upload["with"]["sarif_file"].endswith("gpufleet.sarif")
    # a pull request that stops compiling replaces the green comment with its errors
    (report,) = [s for s in scripts if "gpufleet report" in s]
    assert "if ! gpufleet report" in report and "do not compile" in report
    # the checks may fail without stopping the report; the last step fails the job
    by_id = {s["id"]: s for s in steps if "id" in s}
    assert by_id["check"]["continue-on-error"] and by_id["compiled"]["continue-on-error"]
    last = steps[-1]
    assert "steps.check.outcome == 'failure'" in last["if"] and "exit 1" in last["run"]


FAKE_GH = """#!/bin/sh
# a stand-in for the GitHub CLI: logs its arguments, answers the comment listing
echo "$*" >> "$CALLS"
case "$*" in
  *--paginate*) test -n "$EXISTING" && echo "$EXISTING" ;;
esac
exit 0
"""


def fake_command(tmp_path: Path, name: str, script: str) -> str:
    """A PATH on which `name` is `script` (a fake gh or curl that records its calls), with a
    report.md in `tmp_path` for the comment step to post."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / name).write_text(script)
    (bin_dir / name).chmod(0o755)
    (tmp_path / "report.md").write_text("# gpufleet capacity report\n")
    return f"{bin_dir}:{os.environ['PATH']}"


@pytest.mark.parametrize(("existing", "verb"), [("", "POST"), ("4242", "PATCH")])
def test_the_workflow_keeps_one_sticky_comment(tmp_path: Path, existing: str, verb: str) -> None:
    """The comment step, run as the runner runs it (bash, a fake `gh`): it edits the
    comment its marker finds, and creates one only when there is none."""
    steps = yaml.safe_load(GITHUB_WORKFLOW.read_text())["jobs"]["gpufleet"]["steps"]
    (script,) = [s["run"] for s in steps if "gh api" in s.get("run", "")]
    calls = tmp_path / "calls"
    env = {
        "PATH": fake_command(tmp_path, "gh", FAKE_GH),
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_REPOSITORY": "acme/fleet",
        "PR": "7",
        "CALLS": str(calls),
        "EXISTING": existing,
    }
    done = subprocess.run(["bash", "-e", "-c", script], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    listing, *rest = calls.read_text().splitlines()
    write = "\n".join(rest)  # the body spans lines
    assert listing.startswith("api repos/acme/fleet/issues/7/comments --paginate")
    assert write.startswith(f"api -X {verb} ")
    target = "issues/comments/4242" if existing else "issues/7/comments"
    assert f"repos/acme/fleet/{target} -f body=<!-- gpufleet-report -->" in write
    assert write.endswith("# gpufleet capacity report")


def _gitlab_job() -> dict[str, Any]:
    pipeline: dict[str, Any] = yaml.safe_load(GITLAB_PIPELINE.read_text())
    return cast(dict[str, Any], pipeline["gpufleet"])


def test_the_gitlab_pipeline_checks_compiles_reports_and_fails_on_errors() -> None:
    job = _gitlab_job()
    assert job["rules"][0]["if"] == '$CI_PIPELINE_SOURCE == "merge_request_event"'
    script: list[str] = job["script"]
    assert INSTALL.fullmatch(script[0].strip())
    commands = gpufleet_commands(script)
    assert commands == [
        "gpufleet check --format json",
        "gpufleet check --format sarif",
        "gpufleet compile --check",
        'gpufleet report --format text --previous "$CI_PROJECT_DIR/.base/out"',
    ]
    assert all(parses(command) for command in commands)
    assert "gpufleet check --format json > gpufleet.json || status=1" in script
    assert "gpufleet compile --check || status=1" in script
    assert script[-1] == 'exit "$status"'
    assert job["artifacts"]["when"] == "always"
    assert job["artifacts"]["reports"]["codequality"] == "gl-code-quality-report.json"
    assert {"gpufleet.json", "gpufleet.sarif", "report.md"} <= set(job["artifacts"]["paths"])


def test_the_gitlab_code_quality_report_is_made_from_the_json_document(
    tmp_path: Path, run_cli: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pipeline's conversion, run on what `gpufleet check --format json` prints for an
    infeasible fleet: one Code Quality issue per finding, at its file and line."""
    monkeypatch.chdir(REPO / "tests" / "cli_cases" / "infeasible")
    code, out, _ = run_cli("check", "--policies", "policies", "--format", "json")
    assert code == 1
    (tmp_path / "gpufleet.json").write_text(out)
    (convert,) = [s for s in _gitlab_job()["script"] if "gl-code-quality-report.json" in s]
    done = subprocess.run(["bash", "-e", "-c", convert], cwd=tmp_path, capture_output=True)
    assert done.returncode == 0, done.stderr
    (issue,) = json.loads((tmp_path / "gl-code-quality-report.json").read_text())
    assert issue["check_name"] == "GF401" and issue["severity"] == "critical"
    assert issue["location"]["path"] == "policies/grants/research.yaml"
    assert issue["location"]["lines"]["begin"] >= 1 and len(issue["fingerprint"]) == 64


FAKE_CURL = """#!/bin/sh
# a stand-in for curl: logs its arguments, answers the note listing
echo "$*" >> "$CALLS"
case "$*" in
  *per_page=100*) printf '[{"id": 1, "body": "lgtm"}%s]' "$EXISTING" ;;
esac
exit 0
"""


@pytest.mark.parametrize(
    ("existing", "verb"),
    [("", "POST"), (', {"id": 99, "body": "<!-- gpufleet-report -->\\nold"}', "PUT")],
)
def test_the_gitlab_pipeline_keeps_one_sticky_note(
    tmp_path: Path, existing: str, verb: str
) -> None:
    (script,) = [s for s in _gitlab_job()["script"] if "PRIVATE-TOKEN" in s]
    calls = tmp_path / "calls"
    env = {
        "PATH": fake_command(tmp_path, "curl", FAKE_CURL),
        "CI_API_V4_URL": "https://gitlab.example.com/api/v4",
        "CI_PROJECT_ID": "12",
        "CI_MERGE_REQUEST_IID": "7",
        "GPUFLEET_GITLAB_TOKEN": "t",
        "CALLS": str(calls),
        "EXISTING": existing,
    }
    done = subprocess.run(
        ["bash", "-e", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    lines = calls.read_text().splitlines()
    notes = "https://gitlab.example.com/api/v4/projects/12/merge_requests/7/notes"
    assert f"{notes}?per_page=100&sort=asc" in lines[0]
    write = "\n".join(lines[1:])
    assert f"--request {verb}" in write
    assert write.rstrip().endswith(f"{notes}/99" if existing else notes)
    assert "body=<!-- gpufleet-report -->" in write
