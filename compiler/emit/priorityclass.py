"""PriorityClasses, one per level of the ladder."""

from __future__ import annotations

from compiler.emit.manifest import Manifest, provenance
from compiler.emit.view import ClusterView
from compiler.emit.waves import WAVES

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
            template="priorityclass.yaml.j2",
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
