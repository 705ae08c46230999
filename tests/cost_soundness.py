"""Soundness of the admission cost bound: evaluations of generated requests, charged by the
reference evaluator (tests/cel_runtime_cost.py), never cost more than the bound computed for
shapes shrunk to the generated objects' sizes, and give cel-cpp's values."""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import Any

from compiler.cel import compile_expression
from compiler.cel import kubernetes_shapes as k8s
from compiler.cel.ast import Node, parse_checked, selected_fields
from compiler.cel.value_bounds import Shape
from compiler.emit.admission_cost import ADMISSION_VARIABLES, PolicyCost, policy_cost
from compiler.emit.admission_rules import PolicyRule
from tests.admission_harness import Request
from tests.cel_runtime_cost import Err, evaluate

CAP_ITEMS, CAP_CHARS = 3, 32
"""The sizes generated objects stay within: lists of at most 3 items, strings of 32 chars."""


def shrink(shape: Shape) -> Shape:
    """The same shape with every list at most CAP_ITEMS long, every string CAP_CHARS."""
    cap = CAP_ITEMS if shape.kind == "list" else CAP_CHARS
    return dataclasses.replace(
        shape,
        size=None if shape.size is None else min(shape.size, cap),
        item=shrink(shape.item) if shape.item else None,
        key=shrink(shape.key) if shape.key else None,
        fields=tuple((n, shrink(s)) for n, s in shape.fields),
    )


def shrunken_bound(rule: PolicyRule) -> PolicyCost:
    """The rule's bound for objects within the shrunken shapes."""
    small = shrink(rule.object_shape)
    return policy_cost(
        rule,
        {
            "object": small,
            "oldObject": small,
            "request": shrink(k8s.REQUEST),
            "namespaceObject": shrink(k8s.NAMESPACE),
        },
    )


@cache
def parse(source: str) -> Node:
    """An expression's checked syntax tree, with the API server's variables declared."""
    return parse_checked(source, ADMISSION_VARIABLES)


def request_values(request: Request) -> dict[str, Any]:
    """The variables an admission policy sees for `request` (no variables evaluated yet)."""
    return {
        "object": request.object,
        "oldObject": request.old_object,
        "request": request.as_cel(),
        "params": None,
        "namespaceObject": {"metadata": {"name": request.namespace, "labels": {}}},
        "variables": {},
    }


def check_sound(rule: PolicyRule, bound: PolicyCost, request: Request) -> None:
    """Every expression's cost on `request` (with the variables it reaches) is within the
    bound, its value is cel-cpp's, and only a message of an allowed request fails."""
    values = request_values(request)
    for _, condition in rule.match_conditions:
        matched, cost = evaluate(parse(condition), values)
        assert cost <= bound.match_conditions
        if matched is not True:
            return
    expressions = [(f"variables.{n}", s, "any") for n, s in rule.variables]
    for i, v in enumerate(rule.validations):
        expressions.append((f"validations[{i}].expression", v.expression, "bool"))
        expressions.append((f"validations[{i}].messageExpression", v.message_expression, "any"))
    spent: dict[str, int] = {}
    allowed = True
    for label, source, result in expressions:
        value, spent[label] = evaluate(parse(source), values)
        if isinstance(value, Err):
            assert label.endswith("messageExpression") and allowed, (label, value)
        else:
            expected = compile_expression(source, ADMISSION_VARIABLES, result).evaluate(values)
            assert unordered(expected) == unordered(value), label
        if label.endswith("].expression"):
            allowed = value is True
        if label.startswith("variables."):
            values["variables"][label.removeprefix("variables.")] = value
    for label, source, _ in expressions:
        through = reached(rule, source)
        assert spent[label] + sum(spent[r] for r in through) <= bound.calls[label], label
    assert sum(spent.values()) <= bound.total


def unordered(value: Any) -> Any:
    """A value with the order of its lists of names and of a message's words left out: map
    keys come in an order CEL does not define (cel-cpp's is not Python's; cel-go's varies)."""
    if isinstance(value, str):
        return sorted(value.replace(",", " ").split())
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return sorted(value)
    if isinstance(value, list):
        return [unordered(v) for v in value]
    return value


def reached(rule: PolicyRule, source: str) -> set[str]:
    """The variables `source` reads, directly or through other variables."""
    sources = {f"variables.{n}": s for n, s in rule.variables}
    pending = [f"variables.{f}" for f in selected_fields(parse(source), "variables")]
    found: set[str] = set()
    while pending:
        current = pending.pop()
        if current not in found:
            found.add(current)
            pending += [
                f"variables.{f}" for f in selected_fields(parse(sources[current]), "variables")
            ]
    return found
