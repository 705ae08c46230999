"""The pre-commit hooks and the example GitHub Actions workflow run real gpufleet commands."""

from __future__ import annotations

import re
import shlex
from typing import Any

import yaml

from compiler.cli import _parser
from tests.conftest import REPO

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


def test_the_workflow_checks_compiles_and_posts_the_report() -> None:
    workflow = yaml.safe_load((REPO / "examples" / "github-actions" / "gpufleet.yml").read_text())
    assert workflow[True]["pull_request"]["paths"] == ["policies/**", "out/**"]  # `on:` is True
    assert workflow["permissions"]["pull-requests"] == "write"
    (job,) = workflow["jobs"].values()
    scripts = [step["run"] for step in job["steps"] if "run" in step]
    commands = [
        found.group(0).strip()
        for script in scripts
        for line in script.splitlines()
        if (found := re.search(r"\bgpufleet [^>\\]*", line))
    ]
    assert commands == [
        "gpufleet check",
        "gpufleet compile --check",
        'gpufleet report --format text --previous "$RUNNER_TEMP/base/out"',
    ]
    assert all(parses(command) for command in commands)
    assert any("gh pr comment" in script and "--body-file" in script for script in scripts)
    # a pull request that stops compiling replaces the green comment with its errors
    (report,) = [s for s in scripts if "gpufleet report" in s]
    assert "if ! gpufleet report" in report and "do not compile" in report
    (install,) = [s for s in scripts if "pip install" in s]
    assert re.fullmatch(r'pip install "git\+https://\S+@v\d+\.\d+\.\d+"', install.strip())
