"""PriorityClasses, one per level of the ladder."""

from __future__ import annotations

from compiler.emit.manifest import Manifest, provenance
from compiler.emit.waves import WAVES
from compiler.model.policy import PriorityLadder

WAVE_PRIORITIES = WAVES["PriorityClass"]


def priority_classes(cluster: str, ladder: PriorityLadder | None) -> list[Manifest]:
    """A PriorityClass per ladder level, with its preemption policy; never a global default
    (a team's default is emit.default_priority's)."""
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
            cluster=cluster,
            annotations=provenance(ladder.source.origin, f"levels[{level.name}]", WAVE_PRIORITIES),
        )
        for level in ladder.spec.levels
    ]
