"""The static CEL cost bound: hand-checked costs, refusals, and soundness against evaluations.

Soundness is checked against a reference evaluator that charges cel-go's runtime costs
(tests/cel_runtime_cost.py); its values are checked against cel-cpp's, so it evaluates
what the API server evaluates. For generated objects within (shrunken) bounds, every
expression of every emitted policy must cost no more than the bound says.
"""

from __future__ import annotations

import pickle
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler.cel import compile_expression
from compiler.cel import kubernetes_shapes as k8s
from compiler.cel.ast import (
    Call,
    Const,
    Ident,
    ListLit,
    MapLit,
    Select,
    parse_checked,
)
from compiler.cel.cost import (
    MATCH_CONDITIONS_BUDGET,
    PER_CALL_LIMIT,
    RUNTIME_BUDGET,
    CostModelError,
    bound_expression,
    bound_literal,
)
from compiler.cel.literal import CelLiteral, cel_literal
from compiler.cel.value_bounds import list_of, record, string
from compiler.diagnostics import CompileError
from compiler.emit import admission
from compiler.emit.admission_cost import ADMISSION_VARIABLES, PolicyCost, policy_cost
from compiler.emit.admission_rules import PolicyRule
from compiler.pipeline import Compiled, compile_policies
from tests.admission_harness import Request
from tests.admission_requests import claim, container, pod, workload
from tests.cel_runtime_cost import evaluate
from tests.conftest import EXAMPLE
from tests.cost_soundness import CAP_ITEMS, shrunken_bound
from tests.cost_soundness import check_sound as sound

ITEMS = record(items=list_of(32, record(name=string(253), subs=list_of(8, string(63)))))


def test_the_checked_syntax_tree_is_read_back_exactly() -> None:
    node = parse_checked("[-3, 2.5, b'x', null, true, 'é', 18446744073709551615u]", ())
    assert node == ListLit(tuple(Const(v) for v in (-3, 2.5, b"x", None, True, "é", 2**64 - 1)))
    assert parse_checked("has(a.b) && a.c[0] in {'k': [1]}", ("a",)) == Call(
        "_&&_",
        None,
        (
            Select(Ident("a"), "b", test_only=True),
            Call(
                "@in",
                None,
                (
                    Call("_[_]", None, (Select(Ident("a"), "c", False), Const(0))),
                    MapLit(((Const("k"), ListLit((Const(1),))),)),
                ),
            ),
        ),
    )


def test_literals_are_laid_out_one_entry_a_line_and_read_back_by_cel() -> None:
    data = {"b": ["x", "y"], "a": {"k": [{"v": "1", "e": ""}]}}
    text = cel_literal(data)
    assert text.splitlines()[1] == '  "a": {'
    assert compile_expression(text, (), "any").evaluate({}) == data
    with pytest.raises(ValueError, match="printable ASCII"):
        cel_literal("caf\u00e9")


_NAMES = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=12)
_LITERALS = st.recursive(
    _NAMES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_NAMES, inner, max_size=4),
    max_leaves=12,
)


@given(_LITERALS)
@settings(max_examples=60, deadline=None)
def test_a_literal_is_bounded_from_its_data_as_from_its_source(value: Any) -> None:
    """Policies size their data variables without parsing them: the same bound either way
    (merging shapes of different kinds is refused either way too)."""
    try:
        expected = bound_expression(cel_literal(value), {})
    except CostModelError:
        with pytest.raises(CostModelError):
            bound_literal(cel_literal(value))
        return
    assert bound_literal(cel_literal(value)) == expected
    assert isinstance(cel_literal(value), CelLiteral)
    assert pickle.loads(pickle.dumps(cel_literal(value))).value == value


@pytest.mark.parametrize(
    ("expression", "cost"),
    [
        # object 1 + .items 1; per item: condition (@not_strictly_false 1 + accu 1) and step
        # (accu 1 + x 1 + .name 1 + == 1): 6 x 32 items; result 1
        ('object.items.all(x, x.name == "a")', 2 + 6 * 32 + 1),
        # object 1 + has() 1 (the API server charges has() nothing)
        ("has(object.items)", 2),
        # "in" a list costs its length: 3; list literal 10; request 1 + .namespace 1
        ('request.namespace in ["a", "b", "c"]', 2 + 10 + 3),
        # 4 names of <= 10 chars and 3 separators of 2: 46 chars, 0.2 a char
        ("object.names.join(', ')", 2 + 10),
        # string + costs 0.1 per character of both operands: (63 + 1) -> 7
        ('request.namespace + "/"', 2 + 7),
        # == on strings costs 0.1 per character of the shorter: 253 -> 26
        ("object.items[0].name == request.name", 6 + 26),
    ],
)
def test_hand_checked_costs(expression: str, cost: int) -> None:
    shapes = {
        "object": record(items=ITEMS.field("items"), names=list_of(4, string(10))),
        "request": k8s.REQUEST,
    }
    assert bound_expression(expression, shapes).cost == cost


def test_nested_lists_multiply() -> None:
    inner = bound_expression("object.items.all(x, x.subs.all(s, s == 'a'))", {"object": ITEMS})
    assert 32 * 8 * 5 < inner.cost < 32 * 8 * 8


def test_a_variable_shadowed_in_a_nested_comprehension_is_charged_as_its_own() -> None:
    # the inner `x` is a string, the outer a record, and each map's step is charged for an
    # accumulator that grows: a subtree's remembered bound must be that of the variables in
    # scope where it is met
    renamed = bound_expression("object.items.map(x, x.subs.map(s, s + 'a'))", {"object": ITEMS})
    shadowed = bound_expression("object.items.map(x, x.subs.map(x, x + 'a'))", {"object": ITEMS})
    assert shadowed == renamed
    assert renamed.shape == list_of(32, list_of(8, string(64)))


class _Forgetful(dict[Any, Any]):
    """A memo that keeps nothing: every subtree is charged wherever it is met."""

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


@pytest.mark.parametrize("cluster", ["prod-east", "prod-west"])
def test_remembering_subtrees_changes_no_policy_cost(
    cluster: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from compiler.cel import cost
    from compiler.emit.admission_warm_up import SAMPLES

    built = [family(data) for data in SAMPLES for family in admission.RULE_FAMILIES]
    every = [*rules(cluster).values(), *(rule for rule in built if rule is not None)]
    cost._bound_source.cache_clear()
    remembered = [policy_cost(rule) for rule in every]

    class Charged(cost._Walk):
        def __init__(self, free: dict[int, tuple[str, ...]]) -> None:
            super().__init__(free)
            self.known = _Forgetful()

    monkeypatch.setattr(cost, "_Walk", Charged)
    cost._bound_source.cache_clear()
    try:
        assert [policy_cost(rule) for rule in every] == remembered
    finally:
        cost._bound_source.cache_clear()


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ("object.items.all(x, x.owner == 'a')", "field 'owner'"),
        ("object.labels.all(k, k == 'a')", "a map without a size bound"),
        ("object.items.exists(x, x.name.matches('a+'))", "function 'matches'"),
    ],
)
def test_what_the_bound_cannot_model_is_refused(expression: str, reason: str) -> None:
    shapes = {"object": record(items=ITEMS.field("items"), labels=k8s.LABELS)}
    with pytest.raises(CostModelError, match=reason):
        bound_expression(expression, shapes)


@cache
def example() -> Compiled:
    return compile_policies(EXAMPLE)


@cache
def rules(cluster: str) -> dict[str, PolicyRule]:
    resolved = next(c for c in example().fleet.clusters if c.name == cluster)
    data = admission.entitlements(resolved, example().fleet.fleet)
    built = (family(data) for family in admission.RULE_FAMILIES)
    return {rule.name: rule for rule in built if rule is not None}


@pytest.mark.parametrize("cluster", ["prod-east", "prod-west"])
def test_emitted_policies_are_the_analysed_rules_and_fit_the_limits(cluster: str) -> None:
    import yaml

    for name, rule in rules(cluster).items():
        emitted = yaml.safe_load(
            example().tree[f"clusters/{cluster}/_cluster/validatingadmissionpolicy_{name}.yaml"]
        )["spec"]
        assert [(v["name"], v["expression"]) for v in emitted["variables"]] == list(rule.variables)
        assert [v["expression"] for v in emitted["validations"]] == [
            v.expression for v in rule.validations
        ]
        assert [v["messageExpression"] for v in emitted["validations"]] == [
            v.message_expression for v in rule.validations
        ]
        cost = policy_cost(rule)
        assert cost.problems() == []
        assert max(cost.calls.values()) < PER_CALL_LIMIT / 2, (name, cost.calls)
        assert cost.total < RUNTIME_BUDGET / 10
        assert cost.match_conditions < MATCH_CONDITIONS_BUDGET / 1000


def test_problems_name_the_limit_exceeded() -> None:
    cost = PolicyCost({"validations[0].expression": PER_CALL_LIMIT + 1}, RUNTIME_BUDGET + 1, 0)
    problems = cost.problems()
    assert "validations[0].expression may cost 1,000,001" in problems[0]
    assert "budget 10,000,000" in problems[1]


def test_a_policy_over_the_limits_stops_the_compile(monkeypatch: pytest.MonkeyPatch) -> None:
    over = PolicyCost({"variables.denied": 2 * PER_CALL_LIMIT}, 0, 0)
    monkeypatch.setattr(admission, "policy_cost", lambda rule: over)
    with pytest.raises(CompileError) as caught:
        compile_policies(EXAMPLE)
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.code == "GF701"
    assert "variables.denied may cost 2,000,000" in diagnostic.message
    assert diagnostic.span is not None and diagnostic.span.file.endswith("prod-east.yaml")


# ---- soundness: evaluations of generated objects never cost more than the bound ----

NAMES = st.sampled_from(["training", "general", "inference", "gpu.nvidia.com", "batch"])
TOLERATION = st.fixed_dictionaries(
    {},
    optional={
        "key": st.sampled_from(["gpu.nvidia.com/ecc-errors", "example.com/maintenance", ""]),
        "operator": st.sampled_from(["Exists", "Equal"]),
        "value": st.sampled_from(["", "uncorrectable"]),
        "effect": st.sampled_from(["NoSchedule", "NoExecute", ""]),
    },
)
DEVICE = st.fixed_dictionaries(
    {"deviceClassName": NAMES},
    optional={
        "tolerations": st.lists(TOLERATION, max_size=CAP_ITEMS),
        "adminAccess": st.booleans(),
    },
)
REQUEST = st.one_of(
    DEVICE.map(lambda d: {"name": "gpu", "exactly": d}),
    st.lists(DEVICE, min_size=1, max_size=CAP_ITEMS).map(
        lambda ds: {
            "name": "gpu",
            "firstAvailable": [d | {"name": f"s{i}"} for i, d in enumerate(ds)],
        }
    ),
    DEVICE.map(lambda d: {"name": "gpu"} | d),
)
NAMESPACES = st.sampled_from(["ml-research", "gpu-ops", "data-science", "llm-serving", "other"])
CLAIMS = st.builds(
    lambda ns, requests, kind: claim(ns, *requests, kind=kind),
    NAMESPACES,
    st.lists(REQUEST, max_size=CAP_ITEMS),
    st.sampled_from(["ResourceClaim", "ResourceClaimTemplate"]),
)
RESOURCES = st.dictionaries(
    st.sampled_from(["nvidia.com/gpu", "cpu", "example.com/fpga"]), st.just("1"), max_size=3
)
CONTAINERS = st.lists(
    st.builds(lambda req, lim: container(requests=req, limits=lim), RESOURCES, RESOURCES),
    min_size=1,
    max_size=CAP_ITEMS,
)
PODS = st.builds(
    lambda ns, c, i, p, label: pod(
        ns, c, i, p, {"kueue.x-k8s.io/priority-class": label} if label else None
    ),
    NAMESPACES,
    CONTAINERS,
    st.lists(st.builds(lambda r: container("init", limits=r), RESOURCES), max_size=CAP_ITEMS),
    st.one_of(st.none(), NAMES),
    st.one_of(st.none(), NAMES),
)
WORKLOADS = st.builds(workload, NAMESPACES, NAMES, st.sampled_from(["v1beta1", "v1beta2"]))


def check_sound(rule: PolicyRule, request: Request) -> None:
    """The rule's cost on `request` is within its bound (tests/cost_soundness.py)."""
    sound(rule, shrunken_cost(rule.name), request)


@cache
def shrunken_cost(name: str) -> PolicyCost:
    return shrunken_bound(rules("prod-east")[name])


SOUNDNESS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SOUNDNESS
@given(CLAIMS)
def test_claim_policies_never_cost_more_than_the_bound(request: Request) -> None:
    for name in (
        "gpufleet-tier-entitlement",
        "gpufleet-device-tolerations",
        "gpufleet-admin-access",
    ):
        check_sound(rules("prod-east")[name], request)


@SOUNDNESS
@given(st.one_of(PODS, WORKLOADS))
def test_workload_policies_never_cost_more_than_the_bound(request: Request) -> None:
    for name in ("gpufleet-priority-entitlement", "gpufleet-dra-only"):
        if name == "gpufleet-dra-only" and request.kind[2] != "Pod":
            continue
        check_sound(rules("prod-east")[name], request)


def test_a_claim_at_every_api_maximum_stays_under_the_bound_and_the_limit() -> None:
    key = "k" * 253 + "/" + "n" * 63
    toleration = {"key": key, "operator": "Equal", "value": "v" * 63, "effect": "NoSchedule"}
    device = {"deviceClassName": "c" * 253, "tolerations": [toleration] * k8s.DEVICE_TOLERATIONS}
    requests = [
        {"name": f"r{i}", "firstAvailable": [device | {"name": f"s{j}"} for j in range(8)]}
        for i in range(k8s.DEVICE_REQUESTS)
    ]
    request = claim("ml-research", *requests)
    rule = rules("prod-east")["gpufleet-device-tolerations"]
    bound = policy_cost(rule)
    values: dict[str, Any] = {
        "object": request.object,
        "request": request.as_cel(),
        "variables": {},
    }
    total = 0
    for name, source in rule.variables:
        value, cost = evaluate(parse_checked(source, ADMISSION_VARIABLES), values)
        values["variables"][name] = value
        total += cost
    validation = rule.validations[0]
    allowed, cost = evaluate(parse_checked(validation.expression, ADMISSION_VARIABLES), values)
    assert allowed is False
    total += cost
    assert total <= bound.calls["validations[0].expression"] < PER_CALL_LIMIT
    assert total > bound.calls["validations[0].expression"] / 4  # the bound is not loose
