"""PriorityClasses, one per level of the ladder."""

from __future__ import annotations

from typing import Any

from compiler.emit.manifest import Manifest, provenance
from compiler.emit.view import ClusterView
from compiler.emit.waves import WAVES
from compiler.emit.yaml_writer import object_yaml

WAVE_PRIORITIES = WAVES["PriorityClass"]


def emit(view: ClusterView) -> list[Manifest]:
    """A PriorityClass per ladder level, with its preemption policy; never a global default
    (a team's default is emit.default_priority's)."""
    ladder = view.fleet.ladder
    if ladder is None:
        return []
    return [
        Manifest(
            kind="PriorityClass",
            name=level.name,
            builder=build,
            values={
                "value": level.value,
                "preemption": level.preemption,
                "description": level.description,
            },
            cluster=view.cluster.name,
            annotations=provenance(ladder.source.origin, f"levels[{level.name}]", WAVE_PRIORITIES),
        )
        for level in ladder.spec.levels
    ]


def build(manifest: Manifest) -> str:
    """A PriorityClass's YAML: never the global default; a description only when it has one."""
    values = manifest.values
    body: dict[str, Any] = {
        "value": values["value"],
        "preemptionPolicy": values["preemption"],
        "globalDefault": False,
    }
    if values["description"]:
        body["description"] = values["description"]
    return object_yaml("scheduling.k8s.io/v1", manifest, body)
