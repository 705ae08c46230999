"""Team: namespaces, quotas per tier, priorities and the device taints it may tolerate."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from compiler.model.base import Name, PolicyObject, QualifiedName, Strict


class Quota(Strict):
    """A team's share of one tier: guaranteed devices, a borrowing limit, a gang size."""

    tier: Name
    guaranteed: Annotated[int, Field(ge=0, le=10_000_000)]
    limit: Annotated[int, Field(ge=0, le=10_000_000)] | None = None
    gang: Annotated[int, Field(ge=1, le=32)] = 1
    namespace: Name | None = None

    @property
    def effective_limit(self) -> int:
        """The limit, defaulting to the guarantee."""
        return self.guaranteed if self.limit is None else self.limit


class Toleration(Strict):
    """A device taint the team's claims may tolerate (and get in their claim templates)."""

    key: QualifiedName
    operator: Literal["Exists", "Equal"] = "Exists"
    value: Annotated[str, Field(max_length=63)] | None = None
    effect: Literal["NoSchedule", "NoExecute"] | None = None

    @model_validator(mode="after")
    def _value_with_equal(self) -> Toleration:
        if self.operator == "Equal" and self.value is None:
            raise ValueError("operator Equal needs a value")
        if self.operator == "Exists" and self.value is not None:
            raise ValueError("operator Exists takes no value")
        return self


class TeamSpec(Strict):
    """A team's namespaces, clusters, quotas and what it may use."""

    namespaces: Annotated[list[Name], Field(min_length=1, max_length=64)]
    clusters: Annotated[list[Name], Field(max_length=256)] | None = None
    quotas: Annotated[list[Quota], Field(max_length=256)] = []
    priorities: Annotated[list[Name], Field(max_length=64)] = []
    default_priority: Name | None = None
    """The class a pod that names none gets (default: the lowest of `priorities`)."""
    memory_qos: Annotated[Literal["guaranteed", "burstable"], Field(alias="memoryQoS")] = (
        "burstable"
    )
    tolerations: Annotated[list[Toleration], Field(max_length=16)] = []
    admin_access: bool = False
    """Whether the team's namespaces may make `adminAccess: true` device requests."""
    cohort: Name | None = None
    """The Kueue cohort of the team's ClusterQueue (default: the cluster's)."""


class Team(PolicyObject):
    """A team: compiles to namespaces, quotas and claim templates."""

    kind: Literal["Team"]
    spec: TeamSpec
