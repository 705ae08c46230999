"""Clusters solved and rendered in worker processes give the very same output as in-process."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler.diagnostics import CompileError
from compiler.parallel import worker_count
from compiler.pipeline import Compiled, compile_policies
from compiler.report.previous import read_previous_plans
from tests.conftest import EXAMPLE, REPO


def test_workers_give_byte_identical_output(
    monkeypatch: pytest.MonkeyPatch, compiled_example: Compiled
) -> None:
    monkeypatch.setenv("GPUFLEET_WORKERS", "2")
    assert worker_count(len(compiled_example.plans)) == 2
    parallel = compile_policies(EXAMPLE, previous=read_previous_plans(REPO / "out")[0])
    assert parallel.tree == compiled_example.tree
    assert list(parallel.tree) == list(compiled_example.tree)


def test_conflicts_found_in_workers_are_reported(
    monkeypatch: pytest.MonkeyPatch, policy_copy: Path
) -> None:
    team = policy_copy / "teams" / "vision.yaml"
    team.write_text(
        team.read_text()
        .replace("guaranteed: 16", "guaranteed: 400")
        .replace("limit: 32", "limit: 400")
    )
    monkeypatch.setenv("GPUFLEET_WORKERS", "2")
    with pytest.raises(CompileError) as caught:
        compile_policies(policy_copy)
    assert [d.code for d in caught.value.diagnostics] == ["GF401"]


def test_small_fleets_stay_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPUFLEET_WORKERS", raising=False)
    assert worker_count(2) == 1
