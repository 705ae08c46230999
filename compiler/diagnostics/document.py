"""`--format json`: every diagnostic of a run as one JSON document on stdout.

The document's shape is these pydantic models, the one source of both the output and its
JSON Schema (docs/diagnostics.schema.json, `diagnostics_schema_text`). `schemaVersion` names
the shape: a field may be added within a version, never renamed, retyped or removed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from compiler.diagnostics.codes import CODES, help_uri
from compiler.diagnostics.diagnostic import Diagnostic, Span, Suppressed

SCHEMA_VERSION = "gpufleet.dev/diagnostics/v1"
SCHEMA_ID = "https://gpufleet.dev/schemas/diagnostics/v1/diagnostics.schema.json"


class _Shape(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        frozen=True,
        extra="forbid",
        use_attribute_docstrings=True,
        json_schema_serialization_defaults_required=True,
    )


class Location(_Shape):
    """Where in a file: 1-based line and column (absent for a file or directory as a whole),
    the end too when known."""

    file: str
    """The path as given on the command line (relative to the working directory)."""
    line: int | None = None
    column: int | None = None
    """In characters (Unicode code points) from 1."""
    end_line: int | None = None
    end_column: int | None = None


class RelatedLocation(_Shape):
    """Another clause involved (the other side of a conflict, the version that gates it)."""

    message: str
    location: Location


class DiagnosticEntry(_Shape):
    """One finding: its stable code, what it says and where, and how to fix it."""

    code: str
    """The stable code, `GF` and three digits (docs/diagnostics/)."""
    name: str
    """The code's name, e.g. `unknown-tier`."""
    severity: Literal["error", "warning"]
    message: str
    location: Location | None
    """Where the finding is; absent for the command line itself."""
    hints: list[str]
    """How to fix it."""
    related: list[RelatedLocation]
    cluster: str | None
    """The cluster the finding is about, if it is about one."""
    team: str | None
    """The team the finding is about, if it is about one."""
    help_uri: str
    """The code's page, with a FAIL and a PASS example."""


class SuppressedEntry(DiagnosticEntry):
    """A warning the fleet silenced: the finding, and the suppression's reason and place."""

    reason: str
    """Why the platform silenced it (the suppression's required reason)."""
    suppressed_by: Location
    """The suppression in the Fleet."""


class Summary(_Shape):
    """The run in numbers: what was found, whether warnings failed it, and its exit code."""

    errors: int
    warnings: int
    """Warnings reported, suppressed ones not counted."""
    suppressed: int
    strict: bool
    """Whether --strict made warnings fail the run."""
    exit_code: int
    """The command's exit code (README.md, Exit codes)."""


class DiagnosticsDocument(_Shape):
    """Everything a gpufleet command found, written once when it ends."""

    schema_version: Literal["gpufleet.dev/diagnostics/v1"]
    """The document's shape: fields may be added within a version, never changed."""
    diagnostics: list[DiagnosticEntry]
    """Errors and warnings, in the order they were found."""
    suppressed: list[SuppressedEntry]
    summary: Summary


def location(span: Span) -> Location:
    """A span as a Location: positions only where the span has them."""
    if span.line <= 0:
        return Location(file=span.file)
    return Location(
        file=span.file,
        line=span.line,
        column=max(span.column, 1),
        end_line=span.end_line or None,
        end_column=span.end_column or None,
    )


def _fields(diagnostic: Diagnostic) -> dict[str, Any]:
    return {
        "code": diagnostic.code,
        "name": CODES[diagnostic.code].name,
        "severity": diagnostic.severity.value,
        "message": diagnostic.message,
        "location": location(diagnostic.span) if diagnostic.span else None,
        "hints": list(diagnostic.hints),
        "related": [
            RelatedLocation(message=note, location=location(span))
            for note, span in diagnostic.related
        ],
        "cluster": diagnostic.cluster,
        "team": diagnostic.team,
        "help_uri": help_uri(diagnostic.code),
    }


def diagnostics_document(
    diagnostics: Sequence[Diagnostic],
    suppressed: Sequence[Suppressed],
    strict: bool,
    exit_code: int,
) -> str:
    """The document as indented JSON text, entries in the order they were reported."""
    document = DiagnosticsDocument(
        schema_version=SCHEMA_VERSION,
        diagnostics=[DiagnosticEntry(**_fields(d)) for d in diagnostics],
        suppressed=[
            SuppressedEntry(
                **_fields(s.diagnostic), reason=s.reason, suppressed_by=location(s.span)
            )
            for s in suppressed
        ],
        summary=Summary(
            errors=sum(d.severity.value == "error" for d in diagnostics),
            warnings=sum(d.severity.value == "warning" for d in diagnostics),
            suppressed=len(suppressed),
            strict=strict,
            exit_code=exit_code,
        ),
    )
    return json.dumps(document.model_dump(by_alias=True), indent=2) + "\n"


def diagnostics_schema() -> dict[str, Any]:
    """The JSON Schema of the document (docs/diagnostics.schema.json)."""
    schema = DiagnosticsDocument.model_json_schema(by_alias=True, mode="serialization")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": f"gpufleet diagnostics ({SCHEMA_VERSION})",
        **schema,
    }


def diagnostics_schema_text() -> str:
    """The schema as stable, indented JSON text."""
    return json.dumps(diagnostics_schema(), indent=2, sort_keys=True) + "\n"
