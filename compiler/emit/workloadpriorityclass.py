"""Kueue WorkloadPriorityClasses: one per level of the priority ladder."""

from __future__ import annotations

from typing import Any

from compiler.emit.kueue import kueue_annotations, kueue_api
from compiler.emit.manifest import Manifest
from compiler.emit.view import ClusterView
from compiler.emit.yaml_writer import object_yaml


def emit(view: ClusterView) -> list[Manifest]:
    """The cluster's WorkloadPriorityClasses (none without Kueue or a ladder)."""
    api = kueue_api(view.cluster)
    ladder = view.fleet.ladder
    if api is None or ladder is None:
        return []
    return [
        Manifest(
            kind="WorkloadPriorityClass",
            name=level.name,
            builder=build,
            values={"api_version": api, "value": level.value, "description": level.description},
            cluster=view.cluster.name,
            annotations=kueue_annotations(
                ladder.source.origin, f"levels[{level.name}]", "WorkloadPriorityClass"
            ),
        )
        for level in ladder.spec.levels
    ]


def build(manifest: Manifest) -> str:
    """A WorkloadPriorityClass's YAML: a description only when it has one."""
    values = manifest.values
    body: dict[str, Any] = {"value": values["value"]}
    if values["description"]:
        body["description"] = values["description"]
    return object_yaml(values["api_version"], manifest, body)
