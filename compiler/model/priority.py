"""PriorityLadder: the fleet's priority levels; compiles to PriorityClasses."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from compiler.model.base import Name, PolicyObject, Strict

MAX_PRIORITY = 1_000_000_000
"""The highest value a user PriorityClass may have."""


_TRAINING = {"name": "training", "value": 10000}
"""A level as the schema's examples show one."""


class PriorityLevel(Strict):
    """One rung of the ladder; compiles to a PriorityClass."""

    name: Annotated[Name, Field(examples=["training", "inference-critical"])]
    """The level's name: the PriorityClass (and Kueue WorkloadPriorityClass) pods name."""
    value: Annotated[int, Field(ge=-2_147_483_648, le=MAX_PRIORITY, examples=[10000])]
    """The PriorityClass's value, at most 1,000,000,000 (above is reserved for system
    classes): higher levels are scheduled, and may preempt, first."""
    preemption: Annotated[Literal["PreemptLowerPriority", "Never"], Field(examples=["Never"])] = (
        "PreemptLowerPriority"
    )
    """The PriorityClass's `preemptionPolicy`: `Never` queues ahead of lower levels but evicts
    nobody."""
    default: Annotated[bool, Field(examples=[False])] = False
    """Retired: a cluster-wide default class is written into every pod that names none,
    also in teams that may not use it; teams declare `defaultPriority` instead (GF208)."""
    description: Annotated[str, Field(max_length=1024, examples=["Scheduled training runs."])] = ""
    """The PriorityClass's description."""


class PriorityLadderSpec(Strict):
    """The fleet's priority levels, highest first."""

    levels: Annotated[
        list[PriorityLevel],
        Field(
            min_length=1,
            max_length=32,
            examples=[[_TRAINING, {"name": "batch", "value": 100, "preemption": "Never"}]],
        ),
    ]
    """The levels, highest first (1 to 32), each a PriorityClass."""


class PriorityLadder(PolicyObject):
    """The fleet's one priority ladder."""

    kind: Literal["PriorityLadder"]
    spec: Annotated[PriorityLadderSpec, Field(examples=[{"levels": [_TRAINING]}])]
    """The fleet's priority levels; compiles to PriorityClasses (and Kueue
    WorkloadPriorityClasses) in every cluster."""
