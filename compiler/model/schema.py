"""The JSON Schema of the policy language, generated from the pydantic models, for editors and CI.

Property descriptions are the fields' docstrings, examples their `Field(examples=...)`. The kinds
are told apart by `kind` with one `if`/`then` per kind rather than a `oneOf`: a validator applies
only the branch `kind` names, so an editor (yaml-language-server, which ignores OpenAPI's
`discriminator`) or `jsonschema` reports that branch's own error (`'selectt' was unexpected`)
instead of "not valid under any of the given schemas".
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue, models_json_schema
from pydantic_core import core_schema

from compiler.model.base import PolicyObject
from compiler.model.docstrings import attribute_docstrings
from compiler.model.policy import API_VERSION, KINDS

SCHEMA_ID = "https://gpufleet.dev/schemas/v1alpha1/policy.schema.json"


class PolicySchemaGenerator(GenerateJsonSchema):
    """pydantic's generator, with each property described by its field's docstring (and its
    default), and without the titles pydantic derives from field names (`Gpuspernode`), which
    editors would show as headings."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        """Never: a title made from the field's name says nothing its key does not."""
        return False

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        """The model's object schema, each property described by its field's docstring."""
        json_schema = super().model_schema(schema)
        describe_properties(json_schema, schema["cls"])
        return json_schema


def describe_properties(json_schema: JsonSchemaValue, model: type[BaseModel]) -> None:
    """Give each property of a model's schema its field's docstring as description, followed by
    its default where the field has a plain one (a fact the schema carries, said in words because
    editors show descriptions on hover but not defaults)."""
    properties = json_schema.get("properties", {})
    docstrings = attribute_docstrings(model)
    for name, field in model.model_fields.items():
        prop = properties.get(field.alias or name)
        if prop is None or name not in docstrings:
            continue
        text = docstrings[name]
        default = prop.get("default")
        if default is not None and not isinstance(default, dict) and "Default" not in text:
            text = f"{text.rstrip('.')}. Default: `{yaml_flow(default)}`."
        prop["description"] = text
        if "const" in prop and "examples" not in prop:
            prop["examples"] = [prop["const"]]  # the one value it may have


def yaml_flow(value: Any) -> str:
    """A default as it would be written in a policy file (YAML flow style)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(yaml_flow(v) for v in value) + "]"
    if isinstance(value, str):
        return value if value else '""'
    return json.dumps(value)


def policy_schema() -> dict[str, Any]:
    """One schema for every policy document: `kind` picks the kind's schema."""
    models: list[type[BaseModel]] = list(KINDS.values())
    refs, definitions = models_json_schema(
        [(model, "validation") for model in models],
        by_alias=True,
        schema_generator=PolicySchemaGenerator,
    )
    fields = attribute_docstrings(PolicyObject)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": f"gpufleet policy ({API_VERSION})",
        "description": "One gpufleet policy document; `kind` decides which fields it takes.",
        "type": "object",
        "required": ["apiVersion", "kind"],
        "properties": {
            "apiVersion": {
                "type": "string",
                "description": fields["api_version"],
                "examples": [API_VERSION],
            },
            "kind": {
                "enum": list(KINDS),
                "description": fields["kind"],
                "examples": ["GpuTier"],
            },
        },
        "allOf": [
            {
                "if": {"properties": {"kind": {"const": kind}}, "required": ["kind"]},
                "then": refs[(model, "validation")],
            }
            for kind, model in KINDS.items()
        ],
        **definitions,
    }


def policy_schema_text() -> str:
    """The schema as stable, indented JSON text."""
    return json.dumps(policy_schema(), indent=2, sort_keys=True) + "\n"
