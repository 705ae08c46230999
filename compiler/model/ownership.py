"""Team files hold Teams only, so a team's own file can change nothing but its own objects.

Teams own their files (CODEOWNERS routes a team's file to the team for review). If that file
could also hold a GpuTier, a Cluster, a DeviceTaint or the PriorityLadder, a team could change
what every other team gets without the platform team reviewing it.
"""

from __future__ import annotations

from collections.abc import Iterable

from compiler.diagnostics import Diagnostic
from compiler.model.base import PolicyObject


def mixed_team_files(objects: Iterable[PolicyObject]) -> list[Diagnostic]:
    """A diagnostic for every non-Team object in a file that declares a Team."""
    objects = list(objects)
    team_files = {o.source.origin: o for o in objects if o.kind == "Team"}
    found = []
    for obj in objects:
        team = team_files.get(obj.source.origin)
        if team is None or obj.kind == "Team":
            continue
        found.append(
            Diagnostic(
                "GF124",
                f"this file declares team {team.name!r}, so it may not declare "
                f"{obj.kind} {obj.name!r} too",
                obj.source.span(("kind",)),
                (f"move the {obj.kind} to a file of its own, outside the team's file",),
                (("the team is declared here", team.source.span(("metadata", "name"))),),
            )
        )
    return found
