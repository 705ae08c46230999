"""PriorityLadder: the fleet's priority levels; compiles to PriorityClasses."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from compiler.model.base import Name, PolicyObject, Strict

MAX_PRIORITY = 1_000_000_000
"""The highest value a user PriorityClass may have."""


class PriorityLevel(Strict):
    """One rung of the ladder; compiles to a PriorityClass."""

    name: Name
    value: Annotated[int, Field(ge=-2_147_483_648, le=MAX_PRIORITY)]
    preemption: Literal["PreemptLowerPriority", "Never"] = "PreemptLowerPriority"
    default: bool = False
    """Retired: a cluster-wide default class is written into every pod that names none,
    also in teams that may not use it; teams declare `defaultPriority` instead (GF208)."""
    description: Annotated[str, Field(max_length=1024)] = ""


class PriorityLadderSpec(Strict):
    """The fleet's priority levels, highest first."""

    levels: Annotated[list[PriorityLevel], Field(min_length=1, max_length=32)]


class PriorityLadder(PolicyObject):
    """The fleet's one priority ladder."""

    kind: Literal["PriorityLadder"]
    spec: PriorityLadderSpec
