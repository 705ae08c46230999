"""Suppression: the platform silences one warning code, in a scope, for a stated reason.

A suppression lives in the Fleet (a platform-owned file, reviewed by the platform's code
owners), never in a team's file: a team cannot hide a warning about its own use. Errors
cannot be suppressed (the resolve stage refuses a suppression naming one, GF260), and a
suppression that silences nothing is itself a warning (GF261), so stale ones do not pile up.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

from compiler.model.base import Name, Strict


def _stated(reason: str) -> str:
    if not reason.strip():
        raise ValueError("a suppression needs a reason: say why the warning does not matter")
    return reason.strip()


class Suppression(Strict):
    """One warning code silenced fleet-wide, or only for one cluster, one team, or one team
    in one cluster; the findings it silences are listed in the report with its reason."""

    code: Annotated[str, Field(pattern=r"^GF[0-9]{3}$", examples=["GF602"])]
    """The warning code to silence, `GF` and three digits (docs/diagnostics/); an error
    code cannot be silenced (GF260)."""
    reason: Annotated[
        str,
        Field(
            min_length=1,
            max_length=1024,
            examples=["every cluster runs Kueue; teams use a fallback tier by its own template"],
        ),
        AfterValidator(_stated),
    ]
    """Why the warning does not matter here: required, and shown in the report."""
    cluster: Annotated[Name | None, Field(examples=["prod-east"])] = None
    """Only this cluster's findings (default: every cluster's, and fleet-wide ones)."""
    team: Annotated[Name | None, Field(examples=["ml-research"])] = None
    """Only findings about this team (default: about any team, or none)."""
