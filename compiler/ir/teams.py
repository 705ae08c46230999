"""A team as the rest of the compiler sees it: its grant and its own file merged (resolve.grants
builds it)."""

from __future__ import annotations

from dataclasses import dataclass

from compiler.diagnostics import Span, SpanSource
from compiler.ir.policy import (
    Allowances,
    MemoryQoS,
    PodSecurityLevel,
    SharedClaim,
    Team,
    TeamGrant,
    Toleration,
)


@dataclass(frozen=True)
class Quota:
    """A team's share of one tier in one namespace: guaranteed devices, a borrowing limit
    and a gang size (`namespace` None: the team's only namespace, if it has one)."""

    tier: str
    namespace: str | None
    guaranteed: int
    limit: int
    gang: int
    written: Span | None = None
    """Where `guaranteed` was written when a per-cluster override of the grant set it (None:
    where the team's composed document says, at this quota's path)."""


@dataclass(frozen=True)
class GrantedTeamSpec:
    """What a team has and how it uses it, grant and own file together."""

    namespaces: tuple[str, ...]
    clusters: tuple[str, ...] | None
    """None: every cluster."""
    quotas: tuple[Quota, ...]
    priorities: tuple[str, ...]
    default_priority: str | None
    memory_qos: MemoryQoS
    tolerations: tuple[Toleration, ...]
    admin_access: bool
    cohort: str | None
    pod_security: PodSecurityLevel
    allow: Allowances
    group: str | None
    owners: tuple[str, ...]
    shared_claims: tuple[SharedClaim, ...] = ()
    """Claims several of the team's pods share (its own file's; checked in resolve.sharing)."""
    cluster_quotas: tuple[tuple[str, tuple[Quota, ...]], ...] = ()
    """The quotas in each cluster whose grant a `quotaOverrides` entry changes (same tiers,
    namespaces and order as `quotas`)."""

    def quotas_in(self, cluster: str) -> tuple[Quota, ...]:
        """The team's quotas in `cluster`: its overrides applied, if the grant has some there."""
        return next((q for name, q in self.cluster_quotas if name == cluster), self.quotas)


@dataclass(frozen=True)
class GrantedTeam:
    """A team: its grant, its own file (if it has one yet) and what they make together."""

    name: str
    spec: GrantedTeamSpec
    source: SpanSource
    """Paths of `spec` resolve to where each value was written (grant or team file): resolve
    gives the grant and team file composed (load.document.ComposedDocument)."""
    grant: TeamGrant
    file: Team | None
