"""Team: the team's own file, which shapes its use of what its grant allows.

A team's file is routed to the team for review (CODEOWNERS), so nothing in it grants
anything: every field here either shapes use (gang sizes, which granted namespace holds which
quota, the default priority, memory QoS, claims its pods share) or narrows what the grant
allows (a subset of its namespaces, clusters, priorities and tolerations, less than its
guarantee or limit). A field left out takes the grant's value. What a team file asks beyond
its grant is GF218.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from compiler.model.base import LabelValue, Name, PolicyObject, QualifiedName, Strict

DeviceCount = Annotated[int, Field(ge=0, le=10_000_000)]
MemoryQoS = Literal["guaranteed", "burstable"]


class Toleration(Strict):
    """A device taint a team's claims may tolerate (and get in their claim templates)."""

    key: QualifiedName
    operator: Literal["Exists", "Equal"] = "Exists"
    value: LabelValue | None = None
    effect: Literal["NoSchedule", "NoExecute"] | None = None

    @model_validator(mode="after")
    def _value_with_equal(self) -> Toleration:
        if self.operator == "Equal" and self.value is None:
            raise ValueError("operator Equal needs a value")
        if self.operator == "Exists" and self.value is not None:
            raise ValueError("operator Exists takes no value")
        return self

    def covers(self, other: Toleration) -> bool:
        """Whether every taint `other` tolerates is tolerated by this one too."""
        if self.key != other.key or self.effect not in (None, other.effect):
            return False
        return self.operator == "Exists" or (
            other.operator == "Equal" and other.value == self.value
        )


class QuotaUse(Strict):
    """How the team uses its grant of one tier: the namespace, the gang size, and less
    than the grant if it wants (several entries of one tier split the grant between
    namespaces, each with its own `guaranteed`)."""

    tier: Name
    namespace: Name | None = None
    guaranteed: DeviceCount | None = None
    limit: DeviceCount | None = None
    gang: Annotated[int, Field(ge=1, le=32)] = 1


class SharedClaim(Strict):
    """Devices several pods share: a ResourceClaim (not a template) in one of the team's
    namespaces, which pods name with `resourceClaimName`. A claim made from a template belongs
    to one pod, so pods of a template never share a device; every pod naming this claim gets
    the same devices, shared as the tier's `sharing` says (TimeSlicing or MPS)."""

    name: Name
    tier: Name
    devices: Annotated[int, Field(ge=1, le=32)] = 1
    namespace: Name | None = None
    """Default: the team's only namespace."""
    clusters: Annotated[list[Name], Field(min_length=1, max_length=256)] | None = None
    """Default: every cluster where the namespace holds quota for the tier."""


class TeamSpec(Strict):
    """What the team's own file may say (everything optional: the grant decides)."""

    namespaces: Annotated[list[Name], Field(min_length=1, max_length=64)] | None = None
    """The granted namespaces the team uses (default: all of them)."""
    clusters: Annotated[list[Name], Field(max_length=256)] | None = None
    """The granted clusters the team uses (default: all of them)."""
    quotas: Annotated[list[QuotaUse], Field(max_length=256)] = []
    """How each granted tier is used (a tier left out is used whole, unganged)."""
    priorities: Annotated[list[Name], Field(max_length=64)] | None = None
    default_priority: Name | None = None
    """The class a pod that names none gets (default: the lowest of the priorities)."""
    memory_qos: Annotated[MemoryQoS, Field(alias="memoryQoS")] = "burstable"
    tolerations: Annotated[list[Toleration], Field(max_length=16)] | None = None
    admin_access: bool | None = None
    cohort: Name | None = None
    """Must be the grant's cohort if given (only the platform places a team in a cohort)."""
    shared_claims: Annotated[list[SharedClaim], Field(max_length=64)] = []
    """Claims whose devices several pods share (each counts against the namespace's quota)."""


class Team(PolicyObject):
    """A team's own file: compiles, with its grant, to namespaces, quotas and claim templates."""

    kind: Literal["Team"]
    spec: TeamSpec = TeamSpec()
