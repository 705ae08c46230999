"""Every plan a test's compile writes is checked by the independent plan checker: `run_cli`
(tests/conftest.py) checks out/plan/*.json after each successful `gpufleet compile` that
writes, against the policies it compiled. These tests prove the check runs and bites."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import tests.conftest
from tests.conftest import EXAMPLE, assert_written_plans_hold

RunCli = Callable[..., tuple[int, str, str]]


def test_a_compile_through_run_cli_has_its_plans_checked(
    run_cli: RunCli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[Path, Path]] = []

    def checker(policies: Path, out: Path) -> list[str]:
        calls.append((policies, out))
        return ["a problem"]

    monkeypatch.setattr(tests.conftest, "check_written_plans", checker)
    out = tmp_path / "out"
    with pytest.raises(AssertionError, match="wrote plans that do not hold: \\['a problem'\\]"):
        run_cli("compile", "--policies", EXAMPLE, "--out", out)
    assert calls == [(EXAMPLE, out)]
    assert run_cli("compile", "--check", "--policies", EXAMPLE, "--out", out)[0] == 0
    assert len(calls) == 1  # --check writes nothing: nothing to check


def test_a_bad_written_plan_is_rejected(run_cli: RunCli, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run_cli("compile", "--policies", EXAMPLE, f"--out={out}")[0] == 0
    argv = ["compile", "--policies", str(EXAMPLE), "--out", str(out)]
    assert_written_plans_hold(argv)
    plan = out / "plan" / "prod-west.json"
    document = json.loads(plan.read_text(encoding="utf-8"))
    gangs = next(
        gangs
        for runs in document["placements"].values()
        for gangs, _ in runs
        if any("," in text for text in gangs.values())
    )
    key, text = next((k, t) for k, t in gangs.items() if "," in t)
    first, second = text.split()[0].split(",")[:2]
    gangs[key] = text.replace(f"{first},{second}", f"{first},{first}", 1)
    plan.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(AssertionError, match=f"cluster prod-west: .*{first} serves two gangs"):
        assert_written_plans_hold(argv)


def test_a_missing_plan_is_rejected(run_cli: RunCli, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run_cli("compile", "--policies", EXAMPLE, "--out", out)[0] == 0
    (out / "plan" / "prod-east.json").unlink()
    with pytest.raises(AssertionError, match="no plan for cluster prod-east"):
        assert_written_plans_hold(["compile", "--policies", str(EXAMPLE), "--out", str(out)])
