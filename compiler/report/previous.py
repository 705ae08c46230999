"""Read the previous plans (out/plan/*.json) back: for plan stability and for reports.

Reading is I/O at the edge: the CLI calls `read_previous_plans` and passes the result into the
pure stages (the solver, the report).
"""

from __future__ import annotations

import json
from pathlib import Path

from compiler.diagnostics import Diagnostic, Span
from compiler.ir import ClusterPlan

PLAN_DIR = "plan"


def plan_from_json(text: str) -> ClusterPlan:
    """A ClusterPlan from the JSON `ClusterPlan.to_json` wrote; ValueError if it is not one."""
    return ClusterPlan.from_json(text)


def read_previous_plans(out: Path) -> tuple[dict[str, ClusterPlan], list[Diagnostic]]:
    """The plans found in `out/plan/`, by cluster, and a warning for each unreadable one."""
    plans: dict[str, ClusterPlan] = {}
    problems: list[Diagnostic] = []
    directory = out / PLAN_DIR
    if not directory.is_dir():
        return plans, problems
    for path in sorted(directory.glob("*.json")):
        try:
            plan = plan_from_json(path.read_text(encoding="utf-8"))
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
