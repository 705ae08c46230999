"""A team's file holds that team's Team only, so it can change nothing but the team's own use.

Teams own their files (CODEOWNERS routes a team's file to the team for review). If that file
could also hold a GpuTier, a Cluster, a DeviceTaint, a GpuModel, a grant or the PriorityLadder,
a team could change what every other team gets without the platform team reviewing it; if it could
hold another team's Team, it could reshape (or zero) that team's use of its grant.
"""

from __future__ import annotations

from collections.abc import Iterable

from compiler.diagnostics import Diagnostic
from compiler.model.base import PolicyObject


def mixed_team_files(objects: Iterable[PolicyObject]) -> list[Diagnostic]:
    """A diagnostic for every object in a file that declares a Team, other than the first
    Team of that file (and further documents of the same team)."""
    objects = list(objects)
    team_files: dict[str, PolicyObject] = {}
    for obj in objects:
        if obj.kind == "Team":
            team_files.setdefault(obj.source.origin, obj)
    found = []
    for obj in objects:
        team = team_files.get(obj.source.origin)
        if team is None or (obj.kind == "Team" and obj.name == team.name):
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
