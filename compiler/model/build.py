"""Build typed policy objects from loaded documents, turning validation errors into diagnostics."""

from __future__ import annotations

import difflib
import re
import types
import typing
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from compiler.diagnostics import CompileError, Diagnostic, Problems, Span, fail
from compiler.diagnostics.excerpt import source_excerpt
from compiler.load.document import KEY, Path, SourceDocument, has_child
from compiler.model.ownership import mixed_team_files
from compiler.model.policy import (
    API_VERSION,
    KINDS,
    Cluster,
    DeviceTaint,
    Fleet,
    GpuModel,
    GpuTier,
    PolicyObject,
    PriorityLadder,
    Team,
    TeamGrant,
)


@dataclass(frozen=True)
class Policies:
    """Every policy object of the input, each kind sorted by name."""

    clusters: tuple[Cluster, ...]
    tiers: tuple[GpuTier, ...]
    teams: tuple[Team, ...]
    """The teams' own files."""
    grants: tuple[TeamGrant, ...]
    taints: tuple[DeviceTaint, ...]
    ladder: PriorityLadder | None
    fleet: Fleet | None
    gpu_models: tuple[GpuModel, ...] = ()
    """GPU models the fleet adds to the built-in catalog."""
    warnings: tuple[Diagnostic, ...] = ()
    """Warnings of the earlier stages (an empty file), reported with resolve's own."""


def build_policies(
    documents: Iterable[SourceDocument], warnings: Iterable[Diagnostic] = ()
) -> Policies:
    """Validate every document into its kind; raise CompileError listing all that fail.

    `warnings` are the load stage's, carried on to be reported with resolve's."""
    objects: list[PolicyObject] = []
    problems = Problems()
    for document in documents:
        try:
            objects.append(build_object(document))
        except CompileError as error:
            problems.extend(error.diagnostics)
    problems.extend(_duplicates(objects))
    problems.extend(mixed_team_files(objects))
    problems.raise_if_errors()

    def of(kind: type[PolicyObject]) -> list[Any]:
        return sorted((o for o in objects if isinstance(o, kind)), key=lambda o: o.name)

    ladders, fleets = of(PriorityLadder), of(Fleet)
    return Policies(
        clusters=tuple(of(Cluster)),
        tiers=tuple(of(GpuTier)),
        teams=tuple(of(Team)),
        grants=tuple(of(TeamGrant)),
        taints=tuple(of(DeviceTaint)),
        ladder=ladders[0] if ladders else None,
        fleet=fleets[0] if fleets else None,
        gpu_models=tuple(of(GpuModel)),
        warnings=tuple(warnings),
    )


def build_object(document: SourceDocument) -> PolicyObject:
    """Validate one document into the model its `kind` names."""
    data = document.data
    if not isinstance(data, dict):
        raise fail(
            "GF104", "a policy document must be a mapping with apiVersion and kind", document.span()
        )
    kind = data.get("kind")
    model = KINDS.get(kind) if isinstance(kind, str) else None
    if model is None:
        known = ", ".join(sorted(KINDS))
        raise fail(
            "GF105",
            f"unknown kind {kind!r}" if kind else "missing `kind`",
            document.span(("kind",)),
            f"kind is one of: {known}",
        )
    if data.get("apiVersion") != API_VERSION:
        raise fail(
            "GF105",
            f"apiVersion must be {API_VERSION}",
            document.span(("apiVersion",)),
            f"write `apiVersion: {API_VERSION}`",
        )
    try:
        built = model.model_validate(data)
    except ValidationError as error:
        raise Problems(_diagnostics(error, document, model)).error() from None
    built._source = document
    return built


def _diagnostics(
    error: ValidationError, document: SourceDocument, model: type[BaseModel]
) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for item in error.errors(include_url=False):
        path = _document_path(document, item["loc"])
        kind = item["type"]
        where = ".".join(str(p) for p in path) or "document"
        if kind == "extra_forbidden":
            field = str(path[-1]) if path else "?"
            allowed = _fields_at(model, path[:-1])
            close = difflib.get_close_matches(field, allowed, n=1)
            hint = MOVED_FIELDS.get((model.__name__, where)) or (
                f"did you mean `{close[0]}`?"
                if close
                else (f"allowed here: {', '.join(allowed)}" if allowed else "remove it")
            )
            found.append(
                Diagnostic(
                    "GF106", f"unknown field `{where}`", document.span((*path, KEY)), (hint,)
                )
            )
        elif kind == "missing":
            missing = str(item["loc"][-1])
            parent = path[:-1] if path and path[-1] == missing else path
            where = ".".join(str(p) for p in parent) or "the document"
            found.append(
                Diagnostic(
                    "GF108", f"missing required field `{missing}` in {where}", document.span(parent)
                )
            )
        else:
            message = item["msg"].removeprefix("Value error, ")
            found.append(
                Diagnostic(
                    "GF107",
                    f"`{where}`: {message}",
                    document.span(path),
                    _hints(kind, item.get("input"), document.span(path)),
                )
            )
    return found


MOVED_FIELDS = {
    ("Fleet", "spec.teams"): "each team's group is now its grant's `group`: run `gpufleet migrate`",
}
"""Fields the policy language had before grants, and where they went."""


def _hints(kind: str, value: Any, span: Span) -> tuple[str, ...]:
    if kind == "literal_error" and isinstance(value, float):
        written = _written(span) or str(value)
        return (f'quote the value: "{written}" (YAML reads {written} as the number {value})',)
    if kind in ("string_type",) and value is not None:
        return ("quote the value to make it a string",)
    return ()


def _written(span: Span) -> str | None:
    """The plain scalar as written at `span` (`1.30`, which YAML reads as 1.3), if readable."""
    excerpt = source_excerpt(span.file, span.line, span.column)
    if excerpt is None:
        return None
    text = excerpt.text[span.column - 1 - excerpt.start :]
    token = re.match(r"[^\s,#\]}]+", text)
    return token.group(0) if token else None


def _document_path(document: SourceDocument, loc: tuple[int | str, ...]) -> Path:
    """The part of a pydantic error location that is a real path into the document."""
    path: list[str | int] = []
    node = document.data
    for step in loc:
        if has_child(node, step):
            node = node[step]
            path.append(step)
        elif isinstance(node, dict) and isinstance(step, str) and step == loc[-1]:
            path.append(step)  # an extra or missing key: the key itself
    return tuple(path)


def _fields_at(model: type[BaseModel], path: Path) -> list[str]:
    """The field names (aliases) a model accepts at `path`, for spelling hints."""
    current: Any = model
    for step in path:
        if isinstance(step, int):
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return []
        field = next((f for n, f in current.model_fields.items() if (f.alias or n) == step), None)
        if field is None:
            return []
        current = _inner_model(field.annotation)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return sorted(f.alias or n for n, f in current.model_fields.items())
    return []


def _inner_model(annotation: Any) -> Any:
    """The BaseModel inside list[...], X | None and Annotated[...] annotations, if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    origin = typing.get_origin(annotation)
    if origin is None and not isinstance(annotation, types.UnionType):
        return None
    for arg in typing.get_args(annotation):
        inner = _inner_model(arg)
        if inner is not None:
            return inner
    return None


def _duplicates(objects: list[PolicyObject]) -> list[Diagnostic]:
    seen: dict[tuple[str, str], PolicyObject] = {}
    found: list[Diagnostic] = []
    for obj in objects:
        singleton = obj.kind in ("PriorityLadder", "Fleet")
        key = (obj.kind, "" if singleton else obj.name)
        first = seen.setdefault(key, obj)
        if first is not obj:
            what = f"a second {key[0]}" if singleton else f"{key[0]} {obj.name!r} again"
            found.append(
                Diagnostic(
                    "GF112",
                    f"this document defines {what}",
                    obj.source.span(("metadata", "name")),
                    ("there is one of each; merge the two or rename one",),
                    (("first defined here", first.source.span(("metadata", "name"))),),
                )
            )
    return found
