"""Write a small object's YAML directly, without a template render (issue 20).

A Jinja render costs about 20 microseconds of fixed overhead, most of it for objects of a
few lines (a Namespace, a ResourceQuota) of which the L fleet writes thousands; this module
lays the same block-style YAML out from plain dicts and lists instead. It is YAML-safe by
construction: every key and every value, the fixed ones too, goes through yaml_safe.finalize,
the function the templates quote every interpolation with, so no string can reach the text
unquoted. The layout is the templates': two spaces a level, a sequence's `- ` two spaces
in from its key, an empty mapping or sequence written as its bare key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from compiler.emit.manifest import MANAGED_BY, Manifest
from compiler.emit.yaml_safe import Block, block, finalize, string_scalar


def object_yaml(api_version: str, manifest: Manifest, body: Mapping[str, Any]) -> str:
    """A Kubernetes object's document: apiVersion, kind, metadata, then `body`'s fields in
    their order."""
    return document(
        {
            "apiVersion": api_version,
            "kind": manifest.kind,
            "metadata": metadata_fields(manifest),
            **body,
        }
    )


def spec_yaml(manifest: Manifest) -> str:
    """The YAML of an object that is its `spec` (`values["spec"]`, laid out as it is) at
    `values["api_version"]`: Kueue's queues and flavors, DeviceTaintRules, Workloads. An
    empty spec is written `spec: {}` (a bare `spec:` would be null)."""
    values = manifest.values
    return object_yaml(values["api_version"], manifest, {"spec": values["spec"] or Block("{}")})


def present(**fields: Any) -> dict[str, Any]:
    """The optional fields that have a value, in their order (an empty or absent one is left
    out, as Kubernetes omits it)."""
    return {key: value for key, value in fields.items() if value}


def config_map_yaml(manifest: Manifest) -> str:
    """A ConfigMap's YAML: each of `values["data"]`'s texts as a literal block (yaml_safe.block)."""
    data = {key: block(text, 4) for key, text in manifest.values["data"].items()}
    return object_yaml("v1", manifest, {"data": data})


def metadata_yaml(manifest: Manifest) -> Block:
    """The `metadata:` block of an object, for the templates (`{{ metadata }}`): its layout
    is written once, here, for templates and builders alike."""
    lines: list[str] = []
    _mapping({"metadata": metadata_fields(manifest)}, 0, lines)
    return Block("\n".join(lines))


def metadata_fields(manifest: Manifest) -> dict[str, Any]:
    """An object's metadata as every manifest writes it: its name, its namespace only when it
    has one, its labels with gpufleet's own, its annotations only when any; keys sorted."""
    fields: dict[str, Any] = {"name": manifest.name}
    if manifest.namespace:
        fields["namespace"] = manifest.namespace
    fields["labels"] = dict(sorted({**manifest.labels, **MANAGED_BY}.items()))
    if manifest.annotations:
        fields["annotations"] = dict(sorted(manifest.annotations.items()))
    return fields


def document(fields: Mapping[str, Any]) -> str:
    """A YAML document of nested mappings, sequences and scalars, ending in a line break."""
    lines: list[str] = []
    _mapping(fields, 0, lines)
    return "\n".join(lines) + "\n"


def comment(*lines: str) -> str:
    """YAML comment lines, each ending in a line break. A line must be printable: a line
    break would end the comment and start a line of YAML, a control character is no YAML."""
    if not all(line.isprintable() for line in lines):
        raise ValueError(f"a comment line holds only printable characters: {lines!r}")
    return "".join(f"# {line}\n" for line in lines)


def _mapping(fields: Mapping[str, Any], indent: int, lines: list[str]) -> None:
    for key, value in fields.items():
        head = _key(indent, key)
        kind = type(value)  # by type first: an ABC check (Mapping) is slow
        if kind is str:  # most values: names, keys, quantities (never a Block)
            lines.append(f"{head} {string_scalar(value)}")
        elif kind is dict:
            lines.append(head)
            _mapping(value, indent + 2, lines)
        elif kind is list or kind is tuple:
            lines.append(head)
            _sequence(value, indent + 2, lines)
        elif kind is not Block and kind is not int and isinstance(value, Mapping):
            lines.append(head)
            _mapping(value, indent + 2, lines)
        else:
            lines.append(f"{head} {finalize(value)}")


@lru_cache(maxsize=4096)
def _key(indent: int, key: str) -> str:
    """A mapping key's text up to its colon (remembered: the same keys recur in every object)."""
    return f"{' ' * indent}{finalize(key)}:"


def _sequence(items: Sequence[Any], indent: int, lines: list[str]) -> None:
    pad = " " * indent
    for item in items:
        if type(item) is str:
            lines.append(f"{pad}- {string_scalar(item)}")
        elif isinstance(item, Mapping) and item:
            entry: list[str] = []
            _mapping(item, indent + 2, entry)
            entry[0] = f"{pad}- {entry[0][indent + 2 :]}"
            lines += entry
        elif isinstance(item, Mapping | list | tuple):
            raise TypeError("a sequence holds scalars or non-empty mappings")
        else:
            lines.append(f"{pad}- {finalize(item)}")
