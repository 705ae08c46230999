"""Check the priority ladder against the rules Kubernetes enforces on PriorityClasses."""

from __future__ import annotations

from collections.abc import Iterator

from compiler.diagnostics import Diagnostic
from compiler.resolve.check import FleetFacts, fleet_check


@fleet_check("GF208")
def check_ladder(facts: FleetFacts) -> Iterator[Diagnostic]:
    """Reserved names, duplicate names and more than one global default are errors (GF208).

    Examples (FAIL and PASS): docs/diagnostics/GF208.md."""
    ladder = facts.policies.ladder
    if ladder is None:
        return
    names: dict[str, int] = {}
    for index, level in enumerate(ladder.spec.levels):
        path = ("spec", "levels", index)
        if level.name.startswith("system-"):
            yield Diagnostic(
                "GF208",
                f"priority {level.name!r}: names starting with `system-` are reserved",
                ladder.source.span((*path, "name")),
                ("choose another name",),
            )

        if level.name in names:
            yield Diagnostic(
                "GF208",
                f"priority {level.name!r} appears twice on the ladder",
                ladder.source.span((*path, "name")),
                related=(
                    (
                        "first here",
                        ladder.source.span(("spec", "levels", names[level.name], "name")),
                    ),
                ),
            )

        names.setdefault(level.name, index)
        if level.default:
            yield Diagnostic(
                "GF208",
                f"priority {level.name!r}: a ladder level can no longer be the global "
                "default: Kubernetes writes a global default into every pod that names no "
                "class, also in the namespaces of teams that may not use it",
                ladder.source.span((*path, "default")),
                (
                    "remove `default`; a team's pods that name no class get the team's "
                    "`defaultPriority` (by default its lowest priority)",
                ),
            )
