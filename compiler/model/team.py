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

    key: Annotated[QualifiedName, Field(examples=["gpufleet.dev/burn-in"])]
    """The key of the device taint tolerated (a DeviceTaint's `key`)."""
    operator: Annotated[Literal["Exists", "Equal"], Field(examples=["Equal"])] = "Exists"
    """`Exists`: any value of the key; `Equal`: only `value`."""
    value: Annotated[LabelValue | None, Field(examples=["true"])] = None
    """With `operator: Equal`, the value tolerated (none with `Exists`)."""
    effect: Annotated[Literal["NoSchedule", "NoExecute"] | None, Field(examples=["NoSchedule"])] = (
        None
    )
    """The effect tolerated. Default: every effect."""

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

    tier: Annotated[Name, Field(examples=["training"])]
    """The granted tier this entry uses."""
    namespace: Annotated[Name | None, Field(examples=["ml-research"])] = None
    """The granted namespace that holds this quota. Default: the team's only namespace (a
    team with several names one)."""
    guaranteed: Annotated[DeviceCount | None, Field(examples=[32])] = None
    """Devices guaranteed here, at most the grant's (several entries of a tier split the
    grant); a multiple of `gang`. Default: the grant's guarantee."""
    limit: Annotated[DeviceCount | None, Field(examples=[48])] = None
    """The most devices usable here, borrowing included; at most the grant's limit.
    Default: the grant's limit."""
    gang: Annotated[int, Field(ge=1, le=32, examples=[8])] = 1
    """Devices a job needs at once on one node (1 to 32): the solver packs guarantees in gangs
    of this size, and the team gets a claim template `<tier>-x<gang>` for them."""


class SharedClaim(Strict):
    """Devices several pods share: a ResourceClaim (not a template) in one of the team's
    namespaces, which pods name with `resourceClaimName`. A claim made from a template belongs
    to one pod, so pods of a template never share a device; every pod naming this claim gets
    the same devices, shared as the tier's `sharing` says (TimeSlicing or MPS)."""

    name: Annotated[Name, Field(examples=["notebooks"])]
    """The ResourceClaim's name, which pods give as `resourceClaimName`; a claim's spec is
    immutable, so changing the claim means a new name."""
    tier: Annotated[Name, Field(examples=["general"])]
    """The tier whose devices the claim takes; it must share (`sharing` other than
    `Exclusive`, GF241)."""
    devices: Annotated[int, Field(ge=1, le=32, examples=[1, 2])] = 1
    """How many devices the claim holds (1 to 32), counted against the namespace's quota for
    as long as the claim exists."""
    namespace: Annotated[Name | None, Field(examples=["data-science"])] = None
    """The granted namespace the claim lives in. Default: the team's only namespace."""
    clusters: Annotated[
        Annotated[list[Name], Field(min_length=1, max_length=256)] | None,
        Field(examples=[["prod-east"]]),
    ] = None
    """The clusters that get the claim. Default: every cluster where the namespace holds quota
    for the tier."""


class TeamSpec(Strict):
    """What the team's own file may say (everything optional: the grant decides)."""

    namespaces: Annotated[
        Annotated[list[Name], Field(min_length=1, max_length=64)] | None,
        Field(examples=[["ml-research"]]),
    ] = None
    """The granted namespaces the team uses (default: all of them)."""
    clusters: Annotated[
        Annotated[list[Name], Field(max_length=256)] | None, Field(examples=[["prod-east"]])
    ] = None
    """The granted clusters the team uses (default: all of them)."""
    quotas: Annotated[
        list[QuotaUse], Field(max_length=256, examples=[[{"tier": "training", "gang": 8}]])
    ] = []
    """How each granted tier is used (a tier left out is used whole, unganged)."""
    priorities: Annotated[
        Annotated[list[Name], Field(max_length=64)] | None, Field(examples=[["training", "batch"]])
    ] = None
    """The granted priority levels the team's pods may use (default: all the grant's)."""
    default_priority: Annotated[Name | None, Field(examples=["training"])] = None
    """The class a pod that names none gets (default: the lowest of the priorities)."""
    memory_qos: Annotated[MemoryQoS, Field(alias="memoryQoS", examples=["guaranteed"])] = (
        "burstable"
    )
    """`guaranteed`: the namespace's default memory limits equal its requests (no pod bursts
    past what it asked); `burstable`: pods may burst up to the node's share per device."""
    tolerations: Annotated[
        Annotated[list[Toleration], Field(max_length=16)] | None,
        Field(examples=[[{"key": "gpufleet.dev/burn-in", "operator": "Exists"}]]),
    ] = None
    """The granted device-taint tolerations the team's claim templates carry (default: all
    the grant's)."""
    admin_access: Annotated[bool | None, Field(examples=[False])] = None
    """`false` gives up a granted `adminAccess` (default: the grant's)."""
    cohort: Annotated[Name | None, Field(examples=["research"])] = None
    """Must be the grant's cohort if given (only the platform places a team in a cohort)."""
    shared_claims: Annotated[
        list[SharedClaim],
        Field(max_length=64, examples=[[{"name": "notebooks", "tier": "general", "devices": 1}]]),
    ] = []
    """Claims whose devices several pods share (each counts against the namespace's quota)."""


class Team(PolicyObject):
    """A team's own file: compiles, with its grant, to namespaces, quotas and claim templates."""

    kind: Literal["Team"]
    spec: Annotated[
        TeamSpec,
        Field(
            examples=[
                {
                    "quotas": [{"tier": "training", "gang": 8}],
                    "defaultPriority": "training",
                    "memoryQoS": "guaranteed",
                }
            ]
        ),
    ] = TeamSpec()
    """How the team uses its grant; everything left out takes the grant's value."""
