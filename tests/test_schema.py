"""The JSON Schema of the policy language: in sync, accepts the example, rejects typos."""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Callable, Iterator
from typing import Annotated, Any

import jsonschema
import pytest
import yaml
from jsonschema.exceptions import best_match
from pydantic import BaseModel, TypeAdapter

from compiler.model.policy import KINDS
from compiler.model.schema import policy_schema
from tests.conftest import EXAMPLE, REPO

SCHEMA_FILE = REPO / "docs" / "policy.schema.json"


def test_committed_schema_is_current(run_cli: Callable[..., tuple[int, str, str]]) -> None:
    code, out, _ = run_cli("schema")
    assert code == 0
    assert out == SCHEMA_FILE.read_text(encoding="utf-8")


def test_example_policies_validate_and_point_editors_at_the_schema() -> None:
    schema = policy_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
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
        {
            "kind": "GpuModel",
            "spec": {
                "productName": "NVIDIA X",
                "architecture": "Hopper",
                "cudaComputeCapability": "9.0",
                "memoryMiB": 1024,
                "pciDeviceId": "0x2330",
                "mig": {"memorySlices": 4, "computeSlices": 4, "profiles": [{"name": "1g"}]},
            },
        },
    ],
)
def test_schema_rejects_what_the_compiler_rejects(document: dict[str, object]) -> None:
    document = {"apiVersion": "gpufleet.dev/v1alpha1", "metadata": {"name": "x"}, **document}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(document, json.loads(SCHEMA_FILE.read_text()))


def _document(kind: str, spec: dict[str, object]) -> dict[str, object]:
    return {
        "apiVersion": "gpufleet.dev/v1alpha1",
        "kind": kind,
        "metadata": {"name": "x"},
        "spec": spec,
    }


POOL = {
    "name": "a",
    "nodes": 1,
    "gpu": "nvidia-h100-80gb-hbm3",
    "gpusPerNode": 8,
    "hostMemory": "2Ti",
    "cpu": 224,
}


@pytest.mark.parametrize(
    ("document", "path", "validator", "names"),
    [
        # a misspelled field: the kind's own error, naming the field, not "matches no kind"
        (
            _document("GpuTier", {"hostMemoryPerGPU": "200Gi"}),
            ["spec"],
            "additionalProperties",
            "'hostMemoryPerGPU'",
        ),
        (_document("Team", {"quota": []}), ["spec"], "additionalProperties", "'quota'"),
        (
            _document(
                "Cluster", {"kubernetesVersion": "1.36", "nodePools": [{**POOL, "gpusPerNod": 8}]}
            ),
            ["spec", "nodePools", 0],
            "additionalProperties",
            "'gpusPerNod'",
        ),
        # a wrong quantity, required or optional: the quantity's rule, not "matches no alternative"
        (
            _document("GpuTier", {"hostMemoryPerGpu": "200GB"}),
            ["spec", "hostMemoryPerGpu"],
            "pattern",
            "'200GB'",
        ),
        (
            _document("Cluster", {"kubernetesVersion": "1.36", "nodePools": [{**POOL, "cpu": -4}]}),
            ["spec", "nodePools", 0, "cpu"],
            "minimum",
            "-4",
        ),
        # an optional (nullable) field of the wrong value: its own rule
        (
            _document("DeviceTaint", {"cluster": "a", "key": "k", "device": 64}),
            ["spec", "device"],
            "maximum",
            "64",
        ),
        # a kind that does not exist: the list of kinds
        (_document("GpuTeir", {}), ["kind"], "enum", "'GpuTeir'"),
    ],
)
def test_a_wrong_document_gets_one_specific_error(
    document: dict[str, object], path: list[object], validator: str, names: str
) -> None:
    """What an editor underlines is the branch of the document's own kind: exactly one error,
    at the wrong field, saying what is wrong with it."""
    schema = json.loads(SCHEMA_FILE.read_text())
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(document))
    assert len(errors) == 1, [e.message for e in errors]
    best = best_match(errors)
    assert best is not None
    assert (list(best.absolute_path), best.validator) == (path, validator), best.message
    assert names in best.message


def _properties(schema: Any, where: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every property schema anywhere in `schema`, with where it is."""
    if isinstance(schema, dict):
        for name, prop in schema.get("properties", {}).items():
            yield f"{where}.{name}", prop
        for key, value in schema.items():
            if key != "if":  # a condition on `kind`, not a place a document's fields are
                yield from _properties(value, f"{where}/{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            yield from _properties(value, f"{where}[{index}]")


def test_every_property_has_a_description_and_a_valid_example() -> None:
    """Editors show the description on hover and complete from the examples: a property
    without them is a field a platform engineer must look up in the source."""
    schema = policy_schema()
    missing = [
        where
        for where, prop in _properties(schema)
        if not prop.get("description") or not prop.get("examples")
    ]
    assert not missing, "properties without a description or an example:\n" + "\n".join(missing)
    for where, prop in _properties(schema):
        validator = jsonschema.Draft202012Validator({"$defs": schema["$defs"], **prop})
        for example in prop["examples"]:
            problem = jsonschema.exceptions.best_match(validator.iter_errors(example))
            assert problem is None, f"{where}: example {example!r}: {problem.message}"


def _models(model: type[BaseModel], seen: dict[str, type[BaseModel]]) -> dict[str, type[BaseModel]]:
    """`model` and every model its fields hold, by class name (the schema's $defs keys)."""
    if model.__name__ not in seen:
        seen[model.__name__] = model
        for field in model.model_fields.values():
            for inner in _models_in(field.annotation):
                _models(inner, seen)
    return seen


def _models_in(annotation: Any) -> Iterator[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
    elif typing.get_origin(annotation) is not None or isinstance(annotation, types.UnionType):
        for arg in typing.get_args(annotation):
            yield from _models_in(arg)


def test_every_example_is_what_the_compiler_accepts() -> None:
    """An example valid for the schema but refused by the model (a name that does not
    normalise, a selector mixing styles) would teach the wrong thing: each field's examples
    pass the field's own pydantic validation too."""
    definitions = policy_schema()["$defs"]
    models: dict[str, type[BaseModel]] = {}
    for kind in KINDS.values():
        _models(kind, models)
    assert sorted(models) == sorted(definitions)
    for name, model in models.items():
        for field_name, field in model.model_fields.items():
            prop = definitions[name]["properties"][field.alias or field_name]
            adapter: TypeAdapter[Any] = TypeAdapter(
                Annotated[field.annotation, *field.metadata] if field.metadata else field.annotation
            )
            for example in prop.get("examples", []):
                adapter.validate_python(example)
