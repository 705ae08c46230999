"""Validate emitted objects: built-in kinds with kubernetes-validate (strict), CRDs with
their vendored openAPIV3Schema."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import yaml

SCHEMAS = Path(__file__).resolve().parent.parent / "compiler" / "schemas"
CMP_SCHEMA = (
    Path(__file__).resolve().parent / "schemas" / "argocd-configmanagementplugin.schema.json"
)
"""plugin.yaml is not a custom resource; this schema is transcribed from Argo CD's Go types."""
CRD_FILES = {
    ("argoproj.io", "ApplicationSet"): "argocd/applicationset-crd.yaml",
    ("argoproj.io", "AppProject"): "argocd/appproject-crd.yaml",
    ("argoproj.io", "Application"): "argocd/application-crd.yaml",
}


@cache
def crd_schema(group: str, kind: str, version: str) -> dict[str, Any]:
    """The openAPIV3Schema of one served version of a vendored CRD."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: the CRDs are megabytes
    crd = yaml.load((SCHEMAS / CRD_FILES[group, kind]).read_text(), Loader=loader)
    for served in crd["spec"]["versions"]:
        if served["name"] == version:
            return dict(served["schema"]["openAPIV3Schema"])
    raise KeyError(f"{group}/{version} {kind} is not in the vendored CRD")


@cache
def crd_validator(group: str, kind: str, version: str) -> Any:
    """A validator for a CRD's schema, built once (checking a megabyte schema takes seconds)."""
    schema = crd_schema(group, kind, version)
    return jsonschema.validators.validator_for(schema)(schema)


def validate_object(obj: dict[str, Any], kubernetes_version: str) -> None:
    """Raise if `obj` is not valid for its API (strict: unknown fields are errors)."""
    group, _, version = obj["apiVersion"].rpartition("/")
    if (group, obj["kind"]) == ("argoproj.io", "ConfigManagementPlugin"):
        jsonschema.validate(obj, json.loads(CMP_SCHEMA.read_text()))
        return
    if (group, obj["kind"]) in CRD_FILES:
        crd_validator(group, obj["kind"], version).validate(obj)
        return
    kubernetes_validate.validate(obj, f"{kubernetes_version}.0", strict=True)
