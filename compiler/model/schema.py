"""The JSON Schema of the policy language, generated from the pydantic models."""

from __future__ import annotations

import json
from typing import Annotated, Any, Union

from pydantic import Field, TypeAdapter

from compiler.model.policy import KINDS

SCHEMA_ID = "https://gpufleet.dev/schemas/v1alpha1/policy.schema.json"


def policy_schema() -> dict[str, Any]:
    """One schema for every policy document, discriminated by `kind`, for editors and CI."""
    document = Annotated[Union[tuple(KINDS.values())], Field(discriminator="kind")]  # type: ignore[valid-type]  # noqa: UP007
    adapter: TypeAdapter[Any] = TypeAdapter(document)  # type: ignore[arg-type]
    schema = adapter.json_schema(by_alias=True, mode="validation")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "gpufleet policy (gpufleet.dev/v1alpha1)",
        **schema,
    }


def policy_schema_text() -> str:
    """The schema as stable, indented JSON text."""
    return json.dumps(policy_schema(), indent=2, sort_keys=True) + "\n"
