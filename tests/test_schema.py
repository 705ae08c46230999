"""The JSON Schema of the policy language: in sync, accepts the example, rejects typos."""

from __future__ import annotations

import json
from collections.abc import Callable

import jsonschema
import pytest
import yaml

from compiler.model.schema import policy_schema
from tests.conftest import EXAMPLE, REPO

SCHEMA_FILE = REPO / "docs" / "policy.schema.json"


def test_committed_schema_is_current(run_cli: Callable[..., tuple[int, str, str]]) -> None:
    code, out, _ = run_cli("schema")
    assert code == 0
    assert out == SCHEMA_FILE.read_text(encoding="utf-8")


def test_example_policies_validate_and_point_editors_at_the_schema() -> None:
    schema = policy_schema()
    for path in sorted(EXAMPLE.rglob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        modeline = text.splitlines()[0]
        assert modeline.startswith("# yaml-language-server: $schema=")
        assert (path.parent / modeline.split("=", 1)[1]).resolve() == SCHEMA_FILE
        for document in yaml.safe_load_all(text):
            jsonschema.validate(document, schema)


@pytest.mark.parametrize(
    "document",
    [
        {"kind": "Team", "spec": {"namespaces": ["x"], "quota": []}},
        {"kind": "Cluster", "spec": {"kubernetesVersion": 1.36, "nodePools": []}},
        {"kind": "Gadget", "spec": {}},
    ],
)
def test_schema_rejects_what_the_compiler_rejects(document: dict[str, object]) -> None:
    document = {"apiVersion": "gpufleet.dev/v1alpha1", "metadata": {"name": "x"}, **document}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(document, json.loads(SCHEMA_FILE.read_text()))
