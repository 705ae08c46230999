"""The CEL cost of the policies that walk into containers: within the API server's limits,
bounded by the assumptions kubernetes_shapes makes, and sound against evaluations.

gpufleet-dra-only walks every resource name of every container, gpufleet-gpu-environment
every variable of every container: no Kubernetes limit bounds either, so the cost bound
rests on assumed maxima (POD_CONTAINERS_ASSUMED, RESOURCE_LIST_ASSUMED,
CONTAINER_ENV_ASSUMED). These tests show the bound follows them, that a pod at every
assumed maximum costs what the bound says (not much less), and that generated pods never
cost more than the bound, charged as cel-go charges (tests/cel_runtime_cost.py, with
`startsWith`).
"""

from __future__ import annotations

import shutil
from functools import cache
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler.cel import kubernetes_shapes as k8s
from compiler.cel.cost import PER_CALL_LIMIT, RUNTIME_BUDGET
from compiler.cel.value_bounds import Shape
from compiler.emit import admission
from compiler.emit.admission_cost import PolicyCost, policy_cost
from compiler.emit.admission_rules import PolicyRule
from compiler.pipeline import Compiled, compile_policies
from tests.admission_harness import Request
from tests.admission_requests import claim, container, debug, exactly, first_available, pod
from tests.cel_runtime_cost import evaluate
from tests.conftest import EXAMPLE
from tests.cost_soundness import CAP_ITEMS, parse, request_values, shrunken_bound
from tests.cost_soundness import check_sound as sound

DRA_ONLY, ENVIRONMENT, UNOWNED = (
    "gpufleet-dra-only",
    "gpufleet-gpu-environment",
    "gpufleet-unowned-claims",
)


@pytest.fixture(scope="module")
def denying_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the example whose Fleet sets denyUnownedClaims."""
    root = tmp_path_factory.mktemp("denying") / "policies"
    shutil.copytree(EXAMPLE, root)
    path = root / "fleet.yaml"
    documents = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
    for document in documents:
        if document["kind"] == "Fleet":
            document["spec"]["denyUnownedClaims"] = True
    path.write_text(yaml.safe_dump_all(documents), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def denying(denying_root: Path) -> Compiled:
    return compiled(denying_root)


@cache
def compiled(root: Path) -> Compiled:
    return compile_policies(root)


def rules(fleet: Compiled, cluster: str) -> dict[str, PolicyRule]:
    """The cluster's policies as the emitter builds them."""
    resolved = next(c for c in fleet.fleet.clusters if c.name == cluster)
    data = admission.entitlements(resolved, fleet.fleet.fleet)
    built = (family(data) for family in admission.RULE_FAMILIES)
    return {rule.name: rule for rule in built if rule is not None}


@pytest.mark.parametrize("cluster", ["prod-east", "prod-west"])
def test_every_policy_fits_the_limits_with_room_to_spare(denying: Compiled, cluster: str) -> None:
    found = rules(denying, cluster)
    assert {DRA_ONLY, ENVIRONMENT, UNOWNED} <= set(found)
    for name, rule in found.items():
        cost = policy_cost(rule)
        assert cost.problems() == [], name
        assert max(cost.calls.values()) < PER_CALL_LIMIT / 2, (name, cost.calls)
        assert cost.total < RUNTIME_BUDGET / 10, name


def _with_pod(rule: PolicyRule, shape: Shape) -> PolicyCost:
    return policy_cost(rule, {"object": shape, "oldObject": shape})


def test_the_bound_follows_each_assumption() -> None:
    """Double one assumed maximum and the cost of the walk over it doubles; assume ten
    times the containers and the policies no longer fit the per-call limit: the
    assumptions, not luck, keep them within it."""
    found = rules(compiled(EXAMPLE), "prod-east")
    dra_only, environment = found[DRA_ONLY], found[ENVIRONMENT]
    walks = "variables.plugin_containers", "variables.environment_containers"
    for rule, walk, doubled in (
        (dra_only, walks[0], k8s.pod(resource_entries=2 * k8s.RESOURCE_LIST_ASSUMED)),
        (dra_only, walks[0], k8s.pod(containers=2 * k8s.POD_CONTAINERS_ASSUMED)),
        (environment, walks[1], k8s.pod(env=2 * k8s.CONTAINER_ENV_ASSUMED)),
        (environment, walks[1], k8s.pod(containers=2 * k8s.POD_CONTAINERS_ASSUMED)),
    ):
        assumed = policy_cost(rule).calls[walk]
        assert 1.9 * assumed < _with_pod(rule, doubled).calls[walk] < 2.1 * assumed
    for rule in (dra_only, environment):
        crowded = k8s.pod(containers=10 * k8s.POD_CONTAINERS_ASSUMED)
        assert _with_pod(rule, crowded).problems()


def _long_name(index: int, domain: str = "example.com") -> str:
    """A resource name of the longest length Kubernetes allows (a qualified name)."""
    prefix = f"{domain}-{index}"
    return f"{prefix:x<{k8s.QUALIFIED_NAME - 64}}/{'n' * 63}"


def _charged(rule: PolicyRule, request: Request) -> dict[str, int]:
    """What each of the rule's expressions costs on `request` (variables once each)."""
    values = request_values(request)
    spent = {}
    for name, source in rule.variables:
        value, spent[f"variables.{name}"] = evaluate(parse(source), values)
        values["variables"][name] = value
    for index, validation in enumerate(rule.validations):
        _, spent[f"validations[{index}].expression"] = evaluate(
            parse(validation.expression), values
        )
    return spent


def test_a_pod_at_every_assumed_maximum_costs_about_the_bound() -> None:
    """Every container at the assumed maxima, every name the longest allowed and none
    refused (so nothing stops a walk early): the bound holds and is not loose."""
    rule = rules(compiled(EXAMPLE), "prod-east")[DRA_ONLY]
    resources = {_long_name(i): "1" for i in range(k8s.RESOURCE_LIST_ASSUMED)}
    full = [
        container(f"c{i}", requests=resources, limits=resources)
        for i in range(k8s.POD_CONTAINERS_ASSUMED)
    ]
    request = pod("ml-research", full, [dict(c, name=f"i{c['name']}") for c in full])
    spent = _charged(rule, request)
    bound = policy_cost(rule)
    walked = spent["variables.plugin_containers"]
    assert walked <= bound.calls["variables.plugin_containers"] < PER_CALL_LIMIT
    assert walked > bound.calls["variables.plugin_containers"] / 2
    assert sum(spent.values()) <= bound.total

    rule = rules(compiled(EXAMPLE), "prod-east")[ENVIRONMENT]
    env = {f"VARIABLE_{i}": "x" for i in range(k8s.CONTAINER_ENV_ASSUMED)}
    full = [container(f"c{i}", env=env) for i in range(k8s.POD_CONTAINERS_ASSUMED)]
    spent = _charged(rule, pod("ml-research", full, full))
    walked = spent["variables.environment_containers"]
    assert walked <= policy_cost(rule).calls["variables.environment_containers"]
    assert walked > policy_cost(rule).calls["variables.environment_containers"] / 2


# ---- soundness: evaluations of generated pods and claims never cost more than the bound ----


@cache
def shrunken_cost(root: Path, name: str) -> tuple[PolicyRule, PolicyCost]:
    rule = rules(compiled(root), "prod-east")[name]
    return rule, shrunken_bound(rule)


def check_sound(root: Path, name: str, request: Request) -> None:
    """The rule's cost on `request` is within its bound (tests/cost_soundness.py)."""
    rule, bound = shrunken_cost(root, name)
    sound(rule, bound, request)


NAMESPACES = st.sampled_from(["ml-research", "gpu-ops", "data-science", "scratch"])
RESOURCES = st.dictionaries(
    st.sampled_from(["nvidia.com/gpu", "nvidia.com/mig-1g.10gb", "cpu", "example.com/fpga"]),
    st.just("1"),
    max_size=CAP_ITEMS,
)
ENV = st.dictionaries(
    st.sampled_from(["NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "HOME"]),
    st.just("all"),
    max_size=CAP_ITEMS,
)
CONTAINER = st.builds(
    lambda name, requests, limits, env: container(name, requests, limits, env),
    st.sampled_from(["main", "sidecar", "setup"]),
    st.one_of(st.none(), RESOURCES),
    st.one_of(st.none(), RESOURCES),
    st.one_of(st.none(), ENV),
)
PODS = st.builds(
    lambda namespace, containers, init, runtime: pod(
        namespace, containers, init, "batch", runtime_class=runtime
    ),
    NAMESPACES,
    st.lists(CONTAINER, min_size=1, max_size=CAP_ITEMS),
    st.lists(CONTAINER, max_size=CAP_ITEMS),
    st.one_of(st.none(), st.sampled_from(["nvidia", "gvisor"])),
)
DEBUGGED = st.builds(
    lambda created, added, before: debug(created, *added, before=before or None),
    PODS,
    st.lists(CONTAINER, min_size=1, max_size=2),
    st.lists(CONTAINER, max_size=1),
)
CLASSES = st.sampled_from(["training", "gpu.nvidia.com", "fpga.example.com"])
CLAIMS = st.builds(
    lambda namespace, classes, kind: claim(
        namespace, exactly(classes[0]), first_available(*classes, name="more"), kind=kind
    ),
    NAMESPACES,
    st.lists(CLASSES, min_size=1, max_size=CAP_ITEMS),
    st.sampled_from(["ResourceClaim", "ResourceClaimTemplate"]),
)
SOUNDNESS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SOUNDNESS
@given(st.one_of(PODS, DEBUGGED))
def test_pod_policies_never_cost_more_than_the_bound(request: Request) -> None:
    check_sound(EXAMPLE, ENVIRONMENT, request)
    if request.operation == "CREATE":
        check_sound(EXAMPLE, DRA_ONLY, request)


@SOUNDNESS
@given(claims=CLAIMS)
def test_the_unowned_claims_policy_never_costs_more_than_the_bound(
    denying_root: Path, claims: Request
) -> None:
    check_sound(denying_root, UNOWNED, claims)
