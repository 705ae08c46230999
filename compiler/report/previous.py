"""Read the previous plans (out/plan/*.json) back: for plan stability and for reports.

Reading is I/O at the edge: the CLI calls `read_previous_plans` (or, where only the solver
needs them, `read_previous_steering`) and passes the result into the pure stages (the solver,
the report).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from compiler.diagnostics import Diagnostic, Span
from compiler.ir import ClusterPlan, Steering

PLAN_DIR = "plan"

Read = TypeVar("Read", ClusterPlan, Steering)


def plan_from_json(text: str) -> ClusterPlan:
    """A ClusterPlan from the JSON `ClusterPlan.to_json` wrote; ValueError if it is not one."""
    return ClusterPlan.from_json(text)


def read_previous_plans(out: Path) -> tuple[dict[str, ClusterPlan], list[Diagnostic]]:
    """The plans found in `out/plan/`, by cluster, and a warning for each unreadable one."""
    return _read_plans(out, plan_from_json)


def read_previous_steering(out: Path) -> tuple[dict[str, Steering], list[Diagnostic]]:
    """What steers the solver of each plan found in `out/plan/` (all a compile reads of them),
    by cluster, and a warning for each unreadable one."""
    return _read_plans(out, Steering.from_json)


def _read_plans(out: Path, read: Callable[[str], Read]) -> tuple[dict[str, Read], list[Diagnostic]]:
    plans: dict[str, Read] = {}
    problems: list[Diagnostic] = []
    directory = out / PLAN_DIR
    if not directory.is_dir():
        return plans, problems
    for path in sorted(directory.glob("*.json")):
        try:
            plan = read(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as error:
            where = Span(path.as_posix(), 1, 1)
            if isinstance(error, json.JSONDecodeError):
                where = Span(path.as_posix(), error.lineno, error.colno)
            problems.append(
                Diagnostic(
                    "GF504",
                    f"previous plan {path.name} cannot be read ({error}); it is ignored",
                    where,
                    ("run `gpufleet compile` to rewrite it",),
                )
            )
            continue
        plans[plan.cluster] = plan
    return plans, problems
