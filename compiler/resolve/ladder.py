"""Check the priority ladder against the rules Kubernetes enforces on PriorityClasses."""

from __future__ import annotations

from compiler.diagnostics import Diagnostic
from compiler.model.policy import PriorityLadder


def check_ladder(ladder: PriorityLadder | None, problems: list[Diagnostic]) -> None:
    """Reserved names, duplicate names and more than one global default are errors."""
    if ladder is None:
        return
    names: dict[str, int] = {}
    defaults: list[int] = []
    for index, level in enumerate(ladder.spec.levels):
        path = ("spec", "levels", index)
        if level.name.startswith("system-"):
            problems.append(
                Diagnostic(
                    "GF208",
                    f"priority {level.name!r}: names starting with `system-` are reserved",
                    ladder.source.span((*path, "name")),
                    ("choose another name",),
                )
            )
        if level.name in names:
            problems.append(
                Diagnostic(
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
            )
        names.setdefault(level.name, index)
        if level.default:
            defaults.append(index)
    for index in defaults[1:]:
        problems.append(
            Diagnostic(
                "GF208",
                "only one priority level may be the global default",
                ladder.source.span(("spec", "levels", index, "default")),
                related=(
                    (
                        "the first default",
                        ladder.source.span(("spec", "levels", defaults[0], "default")),
                    ),
                ),
            )
        )
