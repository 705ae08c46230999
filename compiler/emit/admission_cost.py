"""Worst-case CEL cost of an admission policy, held against the API server's limits.

The API server charges each expression at runtime and stops it past `PER_CALL_LIMIT`; all
validations, their message expressions and the variables they evaluate share one
`RUNTIME_BUDGET` per policy evaluation, matchConditions their own
`MATCH_CONDITIONS_BUDGET`. Variables are evaluated lazily, at most once: a call is charged
here with every variable it reaches (transitively), the policy total with each once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from compiler.cel import kubernetes_shapes as k8s
from compiler.cel.ast import parse_checked, selected_fields
from compiler.cel.cost import (
    MATCH_CONDITIONS_BUDGET,
    PER_CALL_LIMIT,
    RUNTIME_BUDGET,
    Bound,
    bound_expression,
    bound_literal,
)
from compiler.cel.literal import CelLiteral
from compiler.cel.value_bounds import SCALAR, Shape, record
from compiler.emit.admission_rules import PolicyRule

ADMISSION_VARIABLES = ("namespaceObject", "object", "oldObject", "params", "request", "variables")
"""The variables the API server declares for a policy without an authorizer."""


@dataclass(frozen=True)
class PolicyCost:
    """Upper bounds on one policy's CEL cost."""

    calls: dict[str, int]
    """Each expression (`variables.x`, `validations[0]`, ...) with the variables it reaches."""
    total: int
    """Variables, validations and message expressions together: one policy evaluation."""
    match_conditions: int

    def problems(self) -> list[str]:
        """What exceeds a limit, in words; empty when the policy fits."""
        found = [
            f"{label} may cost {cost:,} (per-expression limit {PER_CALL_LIMIT:,})"
            for label, cost in sorted(self.calls.items())
            if cost > PER_CALL_LIMIT
        ]
        if self.total > RUNTIME_BUDGET:
            found.append(f"the policy may cost {self.total:,} (budget {RUNTIME_BUDGET:,})")
        if self.match_conditions > MATCH_CONDITIONS_BUDGET:
            found.append(
                f"matchConditions may cost {self.match_conditions:,} "
                f"(budget {MATCH_CONDITIONS_BUDGET:,})"
            )
        return found


def policy_cost(rule: PolicyRule, bounds: Mapping[str, Shape] | None = None) -> PolicyCost:
    """The worst-case cost of `rule`'s expressions on any object it can match.

    `bounds` replaces the shapes of `object`/`oldObject`/`request`/`namespaceObject`
    (tests use small ones to compare with evaluations of generated objects).
    """
    shapes: dict[str, Shape] = {}
    own: dict[str, int] = {}
    uses: dict[str, frozenset[str]] = {}
    fixed = {
        "object": rule.object_shape,
        "oldObject": rule.object_shape,
        "request": k8s.REQUEST,
        "namespaceObject": k8s.NAMESPACE,
        "params": SCALAR,
        **(bounds or {}),
    }

    def charge(label: str, source: str) -> Bound:
        if isinstance(source, CelLiteral):  # a constant: sized from its data, reaches nothing
            bound, uses[label] = bound_literal(source), frozenset()
        else:
            uses[label] = _variables_used(source)
            # `variables` holds only the variables (charged so far) the expression reads: its
            # bound, remembered per shapes, then serves every cluster that agrees on those
            # few, however its other variables differ (clusters of other sizes)
            read = {name: shapes[name] for name in uses[label] if name in shapes}
            bound = bound_expression(source, {**fixed, "variables": record(**read)})
        own[label] = bound.cost
        return bound

    for name, source in rule.variables:
        shapes[name] = charge(f"variables.{name}", source).shape
    for index, validation in enumerate(rule.validations):
        charge(f"validations[{index}].expression", validation.expression)
        charge(f"validations[{index}].messageExpression", validation.message_expression)
    conditions = sum(charge(f"matchConditions[{n}]", s).cost for n, s in rule.match_conditions)

    def reached(label: str) -> set[str]:
        seen: set[str] = set()
        pending = [f"variables.{v}" for v in uses[label]]
        while pending:
            current = pending.pop()
            if current not in seen:
                seen.add(current)
                pending.extend(f"variables.{v}" for v in uses[current])
        return seen

    calls = {label: own[label] + sum(own[v] for v in reached(label)) for label in own}
    total = sum(c for label, c in own.items() if not label.startswith("matchConditions"))
    return PolicyCost(calls, total, conditions)


@cache
def _variables_used(source: str) -> frozenset[str]:
    """The policy variables an expression reads (`variables.x` -> x)."""
    return frozenset(selected_fields(parse_checked(source, ADMISSION_VARIABLES), "variables"))
