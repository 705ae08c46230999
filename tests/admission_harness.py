"""Run emitted ValidatingAdmissionPolicies the way the API server does, on requests built in tests.

For each binding whose namespaceSelector selects the request's namespace and whose policy's
resourceRules match it: evaluate matchConditions (all must hold), then the variables, then
each validation; a false validation denies with its messageExpression (the static message
if that fails); an error anywhere denies too (failurePolicy: Fail). Expressions are compiled
and evaluated by the real CEL engine (cel-cpp), with the API server's variable names.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from typing import Any

import yaml

from compiler.cel import CelEvaluationError, compile_expression
from compiler.emit.admission import NAMESPACE_NAME
from compiler.emit.admission_cost import ADMISSION_VARIABLES


@dataclass(frozen=True)
class Request:
    """An admission request: what is done to which object, in which namespace."""

    kind: tuple[str, str, str]
    """(group, version, kind)"""
    resource: str
    """`pods`, or with a subresource `pods/ephemeralcontainers` (as a rule names it)."""
    namespace: str
    object: dict[str, Any]
    operation: str = "CREATE"
    old_object: dict[str, Any] | None = None

    def as_cel(self) -> dict[str, Any]:
        """The `request` variable."""
        group, version, kind = self.kind
        name = self.object.get("metadata", {}).get("name", "")
        resource, _, subresource = self.resource.partition("/")
        gvr = {"group": group, "version": version, "resource": resource}
        request = {
            "kind": {"group": group, "version": version, "kind": kind},
            "requestKind": {"group": group, "version": version, "kind": kind},
            "resource": gvr,
            "requestResource": gvr,
            "name": name,
            "namespace": self.namespace,
            "operation": self.operation,
            "userInfo": {"username": "alice"},
            "dryRun": False,
        }
        if subresource:  # the API server leaves empty fields out: `request.subResource` errs
            request |= {"subResource": subresource, "requestSubResource": subresource}
        return request


@dataclass(frozen=True)
class Decision:
    """What one policy decided about one request."""

    policy: str
    outcome: str
    """allowed | denied | error"""
    message: str = ""


@dataclass
class Cluster:
    """The admission policies, bindings and namespace labels of one emitted cluster."""

    policies: dict[str, dict[str, Any]]
    bindings: list[dict[str, Any]]
    namespace_labels: dict[str, dict[str, str]] = field(default_factory=dict)

    @classmethod
    def from_tree(cls, tree: dict[str, str], cluster: str) -> Cluster:
        """Read a compiled cluster's policies, bindings and namespaces."""
        objects = [
            yaml.safe_load(text)
            for path, text in tree.items()
            if path.startswith(f"clusters/{cluster}/")
            and path.endswith(".yaml")
            and "/node-config/" not in path
            and not path.endswith("kustomization.yaml")
        ]
        return cls(
            policies={
                o["metadata"]["name"]: o
                for o in objects
                if o["kind"] == "ValidatingAdmissionPolicy"
            },
            bindings=[o for o in objects if o["kind"] == "ValidatingAdmissionPolicyBinding"],
            namespace_labels={
                o["metadata"]["name"]: o["metadata"]["labels"]
                for o in objects
                if o["kind"] == "Namespace"
            },
        )

    def decide(self, request: Request) -> list[Decision]:
        """Every matching policy's decision (every namespace carries the label the API
        server sets to its name)."""
        labels = self.namespace_labels.get(request.namespace, {}) | {
            NAMESPACE_NAME: request.namespace
        }
        decisions = []
        for binding in self.bindings:
            if not selects(binding["spec"]["matchResources"]["namespaceSelector"], labels):
                continue
            policy = self.policies[binding["spec"]["policyName"]]
            decision = evaluate(policy, request, labels)
            if decision is not None:
                decisions.append(decision)
        return decisions

    def admit(self, request: Request) -> Decision:
        """The first denial, or `allowed`: what the client sees."""
        for decision in self.decide(request):
            if decision.outcome != "allowed":
                return decision
        return Decision("", "allowed")


def selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """A metav1.LabelSelector (matchLabels, matchExpressions) against a label set."""
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions", []):
        key, operator = expression["key"], expression["operator"]
        values = expression.get("values", [])
        if operator == "Exists" and key not in labels:
            return False
        if operator == "DoesNotExist" and key in labels:
            return False
        if operator == "In" and labels.get(key) not in values:
            return False
        if operator == "NotIn" and key in labels and labels[key] in values:
            return False
    return True


def _rule_matches(rule: dict[str, Any], request: Request, any_version: bool = False) -> bool:
    group, version, _ = request.kind

    def has(field_name: str, value: str) -> bool:
        return "*" in rule[field_name] or value in rule[field_name]

    return (
        has("apiGroups", group)
        and (any_version or has("apiVersions", version))
        and has("resources", request.resource)
        and has("operations", request.operation)
        and rule.get("scope", "*") in ("*", "Namespaced")
    )


def _matched(rules: list[dict[str, Any]], request: Request) -> Request | None:
    """The request as the policy sees it: as sent when a rule names its version; else, as
    the API server does under matchPolicy Equivalent (the default), converted to the version
    of a rule that names the same group and resource; None when nothing matches."""
    if any(_rule_matches(rule, request) for rule in rules):
        return request
    for rule in rules:
        if _rule_matches(rule, request, any_version=True):
            return convert(request, rule["apiVersions"][0])
    return None


def convert(request: Request, version: str) -> Request:
    """The request at another version of its kind. Claims: v1beta1 flat requests move under
    `exactly` (v1beta2 and v1 have the same shape); other kinds keep their fields."""
    group, _, kind = request.kind

    def claim_at(obj: dict[str, Any] | None) -> dict[str, Any] | None:
        if obj is None or group != "resource.k8s.io" or version == "v1beta1":
            return obj
        obj = copy.deepcopy(obj)
        spec = obj["spec"]["spec"] if kind == "ResourceClaimTemplate" else obj["spec"]
        for index, item in enumerate(spec.get("devices", {}).get("requests", [])):
            if "exactly" not in item and "firstAvailable" not in item:
                name = item.pop("name")
                spec["devices"]["requests"][index] = {"name": name, "exactly": item}
        obj["apiVersion"] = f"{group}/{version}"
        return obj

    converted = claim_at(request.object)
    assert converted is not None
    return dataclasses.replace(
        request,
        kind=(group, version, kind),
        object=converted,
        old_object=claim_at(request.old_object),
    )


def evaluate(policy: dict[str, Any], request: Request, labels: dict[str, str]) -> Decision | None:
    """One policy's decision, or None when it does not match the request."""
    spec, name = policy["spec"], policy["metadata"]["name"]
    matched = _matched(spec["matchConstraints"]["resourceRules"], request)
    if matched is None:
        return None
    request = matched
    values: dict[str, Any] = {
        "object": request.object,
        "oldObject": request.old_object,
        "request": request.as_cel(),
        "params": None,
        "namespaceObject": {"metadata": {"name": request.namespace, "labels": labels}},
        "variables": {},
    }
    try:
        for condition in spec.get("matchConditions", []):
            if not run(condition["expression"], values):
                return None
        for variable in spec.get("variables", []):
            values["variables"][variable["name"]] = run(variable["expression"], values, "any")
        for validation in spec["validations"]:
            if not run(validation["expression"], values):
                try:
                    message = run(validation["messageExpression"], values, "any")
                except CelEvaluationError:
                    message = validation["message"]
                return Decision(name, "denied", str(message))
    except CelEvaluationError as error:
        return Decision(name, "error", str(error))
    return Decision(name, "allowed")


def run(expression: str, values: dict[str, Any], result: str = "bool") -> Any:
    """Compile (cached) and evaluate one expression with the API server's variables."""
    return compile_expression(expression, ADMISSION_VARIABLES, result).evaluate(values)
