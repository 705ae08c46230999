"""Validate emitted objects against the API that will receive them: built-in kinds with
kubernetes-validate's strict schemas of the target Kubernetes version, custom resources with
their vendored CRD schema, structural defaults and `x-kubernetes-validations` CEL rules
(evaluated with compiler.cel). Used by the test suite on every object, and by
`gpufleet compile --validate`."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import yaml
from referencing import Registry, Resource

from compiler.cel import compile_expression

SCHEMAS = Path(__file__).resolve().parent / "schemas"
CMP_SCHEMA = SCHEMAS / "argocd-configmanagementplugin.schema.json"
"""plugin.yaml is not a custom resource; this schema is transcribed from Argo CD's Go types."""
CRD_FILES = {
    ("argoproj.io", "ApplicationSet"): "argocd/applicationset-crd.yaml",
    ("argoproj.io", "AppProject"): "argocd/appproject-crd.yaml",
    ("argoproj.io", "Application"): "argocd/application-crd.yaml",
    ("kueue.x-k8s.io", "ClusterQueue"): "kueue/kueue.x-k8s.io_clusterqueues.yaml",
    ("kueue.x-k8s.io", "Cohort"): "kueue/kueue.x-k8s.io_cohorts.yaml",
    ("kueue.x-k8s.io", "LocalQueue"): "kueue/kueue.x-k8s.io_localqueues.yaml",
    ("kueue.x-k8s.io", "ResourceFlavor"): "kueue/kueue.x-k8s.io_resourceflavors.yaml",
    ("kueue.x-k8s.io", "WorkloadPriorityClass"): (
        "kueue/kueue.x-k8s.io_workloadpriorityclasses.yaml"
    ),
}
CEL_VARIABLES = ("self", "oldSelf")


class CelRuleViolation(ValueError):
    """An object breaks one of its CRD's `x-kubernetes-validations` rules."""


@cache
def crd_schema(group: str, kind: str, version: str) -> dict[str, Any]:
    """The openAPIV3Schema of one served version of a vendored CRD."""
    crd = yaml.load((SCHEMAS / CRD_FILES[group, kind]).read_text(), Loader=yaml.CSafeLoader)
    for served in crd["spec"]["versions"]:
        if served["name"] == version and served.get("served", True):
            return dict(served["schema"]["openAPIV3Schema"])
    raise KeyError(f"{group}/{version} {kind} is not in the vendored CRD")


@cache
def crd_validator(group: str, kind: str, version: str) -> Any:
    """A validator of one CRD version's schema, built once (the vendored schemas themselves are
    checked against the JSON Schema metaschema by the test suite, not on every run)."""
    schema = crd_schema(group, kind, version)
    return jsonschema.validators.validator_for(schema)(schema)


def with_defaults(value: Any, schema: dict[str, Any]) -> Any:
    """A copy of `value` with the schema's `default`s filled in, as the API server does
    before it evaluates validation rules."""
    value = copy.deepcopy(value)
    _default(value, schema)
    return value


def _default(value: Any, schema: dict[str, Any]) -> None:
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        for name, sub in properties.items():
            if name not in value and "default" in sub:
                value[name] = copy.deepcopy(sub["default"])
            if name in value:
                _default(value[name], sub)
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for name, item in value.items():
                if name not in properties:
                    _default(item, extra)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            _default(item, schema["items"])


def check_cel_rules(value: Any, schema: dict[str, Any], path: str = "") -> int:
    """Evaluate every rule declared on every node of `value`; return how many ran.

    A rule that reads `oldSelf` is a transition rule: it is checked as the update Argo CD
    makes when it syncs an unchanged object again (oldSelf = self)."""
    count = 0
    for rule in schema.get("x-kubernetes-validations", []):
        expression = compile_expression(rule["rule"], CEL_VARIABLES)
        if expression.evaluate({"self": value, "oldSelf": value}) is not True:
            message = rule.get("message", rule["rule"])
            raise CelRuleViolation(f"{path or '<root>'}: {message} ({rule['rule']})")
        count += 1
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        for name, item in value.items():
            sub = properties.get(name, extra if isinstance(extra, dict) else None)
            if sub is not None:
                count += check_cel_rules(item, sub, f"{path}.{name}")
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            count += check_cel_rules(item, schema["items"], f"{path}[{index}]")
    return count


BUILTIN_SCHEMAS = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"


@cache
def _definitions(version: str) -> Resource:
    text = (BUILTIN_SCHEMAS / f"v{version}.0-local-strict" / "_definitions.json").read_text()
    return Resource.from_contents(json.loads(text))


@cache
def builtin_validator(version: str, api_version: str, kind: str) -> Any:
    """A strict validator for one built-in kind of one Kubernetes version, built once.

    The same schema files and resolution as kubernetes_validate.validate(strict=True), which
    re-reads the large definitions file on every call."""
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    path = BUILTIN_SCHEMAS / f"v{version}.0-local-strict" / f"{kind.lower()}-{group_version}.json"
    if not path.exists():
        raise kubernetes_validate.SchemaNotFoundError(
            version=version, kind=kind, api_version=api_version
        )
    schema = json.loads(path.read_text())
    registry = Resource.from_contents(schema) @ (_definitions(version) @ Registry())
    return jsonschema.validators.Draft202012Validator(schema, registry=registry)


def validate_builtin(obj: dict[str, Any], kubernetes_version: str) -> None:
    """kubernetes_validate.validate(obj, version, strict=True), with cached validators."""
    validator = builtin_validator(kubernetes_version, obj["apiVersion"], obj["kind"])
    try:
        validator.validate(obj)
    except jsonschema.ValidationError as error:
        raise kubernetes_validate.ValidationError(error, version=kubernetes_version) from None


def validate_object(obj: dict[str, Any], kubernetes_version: str) -> None:
    """Raise if `obj` is not valid for its API (strict: unknown fields are errors)."""
    group, _, version = obj["apiVersion"].rpartition("/")
    if (group, obj["kind"]) == ("argoproj.io", "ConfigManagementPlugin"):
        jsonschema.validate(obj, json.loads(CMP_SCHEMA.read_text()))
        return
    if (group, obj["kind"]) in CRD_FILES:
        schema = crd_schema(group, obj["kind"], version)
        crd_validator(group, obj["kind"], version).validate(obj)
        check_cel_rules(with_defaults(obj, schema), schema)
        return
    validate_builtin(obj, kubernetes_version)


CONFIGURATION_FILES = {("config.kueue.x-k8s.io", "Configuration")}
"""Component configuration files in Kubernetes form, read by a program, not served by an API."""

DEFAULT_VERSION = "1.36"
"""For objects outside a cluster (out/argocd/): the Argo CD CRDs do not depend on it."""


def validate_tree(tree: Mapping[str, str], versions: Mapping[str, str]) -> list[str]:
    """Every emitted object of `tree` checked against its API; one line per invalid object.

    `versions` maps cluster name to its Kubernetes version. Files that are not Kubernetes
    objects (kustomizations, node label lists, kubelet drop-ins, plans) are skipped.
    """
    problems = []
    for path, text in tree.items():
        if not path.endswith(".yaml") or path.endswith("kustomization.yaml"):
            continue
        obj = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        if not isinstance(obj, dict) or "apiVersion" not in obj or "kind" not in obj:
            continue
        if (obj["apiVersion"].rpartition("/")[0], obj["kind"]) in CONFIGURATION_FILES:
            continue
        parts = path.split("/")
        version = (
            versions.get(parts[1], DEFAULT_VERSION) if parts[0] == "clusters" else (DEFAULT_VERSION)
        )
        try:
            validate_object(obj, version)
        except Exception as error:
            detail = (
                str(error).strip().splitlines() or ["no schema for this apiVersion and kind"]
            )[0]
            problems.append(f"{path}: {type(error).__name__}: {detail}")
    return problems
