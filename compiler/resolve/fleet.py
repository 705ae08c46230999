"""The resolved fleet: inventory expanded, selectors evaluated, references checked."""

from __future__ import annotations

from dataclasses import dataclass

from compiler.catalog import GpuModel
from compiler.diagnostics import Diagnostic, Span
from compiler.model.policy import Cluster, Fleet, GpuTier, NodePool, PriorityLadder, Team
from compiler.resolve.inventory import DeviceKind


@dataclass(frozen=True)
class ResolvedPool:
    """A node pool with its catalog model and the device kinds it offers."""

    pool: NodePool
    model: GpuModel
    kinds: tuple[DeviceKind, ...]

    @property
    def gpus(self) -> int:
        """Physical GPUs in the pool."""
        return self.pool.nodes * self.pool.gpus_per_node


@dataclass(frozen=True)
class TierInCluster:
    """A tier as one cluster sees it: its selector and the device kinds that match it."""

    tier: GpuTier
    expression: str
    kinds: tuple[DeviceKind, ...]

    @property
    def name(self) -> str:
        """The tier's (and its DeviceClass's) name."""
        return self.tier.name


@dataclass(frozen=True)
class Guarantee:
    """One quota clause of one team, in one cluster and namespace."""

    team: Team
    quota_index: int
    tier: str
    namespace: str
    count: int
    limit: int
    gang: int

    @property
    def key(self) -> str:
        """A stable identifier, e.g. `ml-research/ml-research/training`."""
        return f"{self.team.name}/{self.namespace}/{self.tier}"

    @property
    def span(self) -> Span:
        """Where the quota clause is written."""
        return self.team.source.span(("spec", "quotas", self.quota_index))

    @property
    def clause(self) -> str:
        """The provenance of the clause: file plus clause, never a line number."""
        return f"{self.team.source.origin}#quotas[{self.tier}]"


@dataclass(frozen=True)
class ResolvedCluster:
    """Everything the solver and the emitters need to know about one cluster."""

    cluster: Cluster
    pools: tuple[ResolvedPool, ...]
    tiers: tuple[TierInCluster, ...]
    teams: tuple[Team, ...]
    guarantees: tuple[Guarantee, ...]

    @property
    def name(self) -> str:
        """The cluster's name."""
        return self.cluster.name

    def tier(self, name: str) -> TierInCluster:
        """The tier called `name` in this cluster."""
        return next(t for t in self.tiers if t.name == name)


@dataclass(frozen=True)
class ResolvedFleet:
    """The whole resolved input: one entry per cluster plus fleet-wide objects."""

    clusters: tuple[ResolvedCluster, ...]
    ladder: PriorityLadder | None
    fleet: Fleet | None
    warnings: tuple[Diagnostic, ...]
