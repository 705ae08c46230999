"""Read the previous plans (out/plan/*.json) back, so a report can say what a change moves.

Reading is the only I/O of the report package: the CLI calls `read_previous_plans` and passes
the result into the pure functions that build reports and diffs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from compiler.diagnostics import Diagnostic, Span
from compiler.solve import ClusterPlan, TierCapacity

PLAN_DIR = "plan"


def plan_from_json(text: str) -> ClusterPlan:
    """A ClusterPlan from the JSON `ClusterPlan.to_json` wrote; ValueError if it is not one.

    Fields this version does not know are ignored, so a plan written by a newer gpufleet
    still compares.
    """
    document = json.loads(text)
    if not isinstance(document, dict) or not isinstance(document.get("cluster"), str):
        raise ValueError("not a gpufleet plan (no cluster name)")
    tiers = _mapping(document, "tiers")
    return ClusterPlan(
        cluster=document["cluster"],
        pool_configs={pool: _counts(v) for pool, v in _mapping(document, "poolConfigs").items()},
        assignments={key: _counts(v) for key, v in _mapping(document, "assignments").items()},
        tiers=tuple(
            TierCapacity(
                name,
                _int(values, "capacity"),
                _int(values, "guaranteed"),
                _int(values, "limit"),
            )
            for name, values in sorted(tiers.items())
        ),
    )


def _mapping(document: dict[str, Any], key: str) -> dict[str, Any]:
    value = document.get(key, {})
    if not isinstance(value, dict):
        raise ValueError(f"{key} is not a mapping")
    return value


def _counts(value: Any) -> dict[str, int]:
    if not isinstance(value, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in value.values()
    ):
        raise ValueError("expected a mapping of counts")
    return {str(k): int(v) for k, v in value.items()}


def _int(values: Any, key: str) -> int:
    value = values.get(key) if isinstance(values, dict) else None
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"tier field {key} is not an integer")
    return value


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
                    f"previous plan {path.name} cannot be read ({error}); the report does not "
                    "compare that cluster",
                    where,
                    ("run `gpufleet compile` to rewrite it",),
                )
            )
            continue
        plans[plan.cluster] = plan
    return plans, problems
