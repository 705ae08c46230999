"""The resolved fleet: inventory expanded, selectors evaluated, references checked."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from compiler.catalog import GpuModel
from compiler.diagnostics import Diagnostic, Span
from compiler.ir.devices import DeviceKind
from compiler.ir.keys import GuaranteeKey
from compiler.ir.policy import (
    Cluster,
    DeviceTaint,
    Fleet,
    GpuTier,
    NodePool,
    PriorityLadder,
    Toleration,
)
from compiler.ir.suppressions import Silenced
from compiler.ir.teams import GrantedTeam
from compiler.versions import Feature, Target, target


@dataclass(frozen=True)
class GroupSize:
    """GPUs per NUMA node or per PCIe root on a pool's nodes, and where the figure comes from."""

    gpus: int
    origin: str
    """`the catalog's board <id>` or `the pool's topology`."""
    unverified: bool = False


@dataclass(frozen=True)
class PoolTopology:
    """How a pool's GPUs group (None: unknown, neither the catalog nor the pool says)."""

    numa_node: GroupSize | None = None
    pcie_root: GroupSize | None = None


@dataclass(frozen=True)
class ResolvedPool:
    """A node pool with its catalog model, the device kinds it offers and its GPU topology."""

    pool: NodePool
    model: GpuModel
    kinds: tuple[DeviceKind, ...]
    topology: PoolTopology = PoolTopology()

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

    team: GrantedTeam
    quota_index: int
    tier: str
    namespace: str
    count: int
    limit: int
    gang: int
    written: Span | None = None
    """Where `count` is written when the grant overrides it for this cluster."""

    @property
    def key(self) -> GuaranteeKey:
        """A stable identifier (written `ml-research/ml-research/training`)."""
        return GuaranteeKey(self.team.name, self.namespace, self.tier)

    @property
    def span(self) -> Span:
        """Where the guaranteed count is written (the grant, a per-cluster override of it, or
        the team file narrowing it)."""
        return self.written or self.team.source.span(
            ("spec", "quotas", self.quota_index, "guaranteed")
        )

    @property
    def clause(self) -> str:
        """The provenance of the clause: file plus clause, never a line number."""
        return f"{self.team.source.origin}#quotas[{self.tier}]"


def tolerates(toleration: Toleration, taint: DeviceTaint) -> bool:
    """Kubernetes toleration matching: effect (empty matches all), key (empty with Exists
    matches all) and value (Exists matches any)."""
    spec = taint.spec
    if toleration.effect is not None and toleration.effect != spec.effect:
        return False
    if toleration.key != spec.key:
        return False
    return toleration.operator == "Exists" or toleration.value == spec.value


@dataclass(frozen=True)
class TaintTarget:
    """The devices of one node pool a taint covers.

    `nodes` None means every node of the pool; `device` None means every device of a node
    (whole GPUs and MIG devices alike).
    """

    pool: ResolvedPool
    nodes: tuple[int, ...] | None
    device: int | None

    @property
    def node_indices(self) -> tuple[int, ...]:
        """The indices of the covered nodes."""
        return self.nodes if self.nodes is not None else tuple(range(self.pool.pool.nodes))

    @property
    def gpus(self) -> int:
        """Physical GPUs covered."""
        per_node = 1 if self.device is not None else self.pool.pool.gpus_per_node
        return len(self.node_indices) * per_node


@dataclass(frozen=True)
class ResolvedTaint:
    """A device taint with the devices it covers and the teams that tolerate it."""

    taint: DeviceTaint
    targets: tuple[TaintTarget, ...]
    tolerated_by: tuple[str, ...]

    @property
    def name(self) -> str:
        """The taint's name."""
        return self.taint.name

    @property
    def blocks_scheduling(self) -> bool:
        """Whether the taint keeps intolerant claims off its devices (effect is not None)."""
        return self.taint.spec.effect != "None"


@dataclass(frozen=True)
class ResolvedCluster:
    """Everything the solver and the emitters need to know about one cluster."""

    cluster: Cluster
    pools: tuple[ResolvedPool, ...]
    tiers: tuple[TierInCluster, ...]
    teams: tuple[GrantedTeam, ...]
    guarantees: tuple[Guarantee, ...]
    taints: tuple[ResolvedTaint, ...] = ()

    @property
    def name(self) -> str:
        """The cluster's name."""
        return self.cluster.name

    @property
    def target(self) -> Target:
        """What the cluster's Kubernetes version serves."""
        return target(self.cluster.spec.kubernetes_version)

    def serves(self, feature: Feature) -> bool:
        """Whether the cluster has the feature on: by default, or by the gates it declares."""
        return self.target.enabled(feature, self.cluster.spec.api_server)

    def tier(self, name: str) -> TierInCluster:
        """The tier called `name` in this cluster."""
        return self._tiers_by_name[name]

    @cached_property
    def _tiers_by_name(self) -> dict[str, TierInCluster]:
        return {t.name: t for t in self.tiers}

    def guarantee(self, key: GuaranteeKey) -> Guarantee:
        """The guarantee with `key`."""
        return self._guarantees_by_key[key]

    @cached_property
    def _guarantees_by_key(self) -> dict[GuaranteeKey, Guarantee]:
        return {g.key: g for g in self.guarantees}

    def node_name(self, pool: ResolvedPool, index: int) -> str:
        """The Kubernetes node name (and DRA pool name) of node `index` of `pool`."""
        return pool.pool.node_name(self.name, index)


@dataclass(frozen=True)
class ResolvedFleet:
    """The whole resolved input: one entry per cluster plus fleet-wide objects."""

    clusters: tuple[ResolvedCluster, ...]
    ladder: PriorityLadder | None
    fleet: Fleet | None
    warnings: tuple[Diagnostic, ...]
    teams: tuple[GrantedTeam, ...]
    """Every granted team, sorted by name (each cluster holds those present there)."""
    suppressions: tuple[Silenced, ...] = ()
    """The fleet's suppressions, each with the warnings it silenced (kept out of
    `warnings`), in the order the Fleet lists them."""
