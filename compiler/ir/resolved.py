"""The resolved fleet: inventory expanded, selectors evaluated, references checked.

Facts derived from it that several stages read (a cluster's GPU node taints and who tolerates
them, its GPU node names, a team's default priority) are members here, computed once.
"""

from __future__ import annotations

from collections.abc import KeysView
from dataclasses import dataclass
from functools import cached_property

from compiler.catalog import GpuModel
from compiler.diagnostics import Diagnostic, Span
from compiler.ir.devices import DeviceKind
from compiler.ir.keys import GuaranteeKey
from compiler.ir.node_names import NodeNames, fixed_prefix, fixed_suffix
from compiler.ir.policy import (
    Cluster,
    DeviceTaint,
    Fleet,
    GpuTier,
    NodePool,
    NodeTaint,
    PriorityLadder,
    PriorityLevel,
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

    @property
    def node_taint(self) -> NodeTaint | None:
        """The taint the pool's nodes register with, if any."""
        return self.pool.node_taint


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

    @property
    def tier_names(self) -> KeysView[str]:
        """The names of the tiers with devices in this cluster."""
        return self._tiers_by_name.keys()

    @cached_property
    def quota_tiers(self) -> dict[tuple[str, str], frozenset[str]]:
        """Per (team, namespace), the tiers it holds quota for (a limit above zero): found
        once per cluster, as each guarantee's claim templates ask."""
        found: dict[tuple[str, str], set[str]] = {}
        for g in self.guarantees:
            if g.limit > 0:
                found.setdefault((g.team.name, g.namespace), set()).add(g.tier)
        return {key: frozenset(tiers) for key, tiers in found.items()}

    def guarantee(self, key: GuaranteeKey) -> Guarantee:
        """The guarantee with `key`."""
        return self._guarantees_by_key[key]

    @cached_property
    def _guarantees_by_key(self) -> dict[GuaranteeKey, Guarantee]:
        return {g.key: g for g in self.guarantees}

    def node_name(self, pool: ResolvedPool, index: int) -> str:
        """The Kubernetes node name (and DRA pool name) of node `index` of `pool`."""
        return self.node_names(pool)[index]

    def node_names(self, pool: ResolvedPool) -> tuple[str, ...]:
        """The names of every node of `pool`, in index order: made once per pool, as solve
        and emit ask for each node's name several times."""
        names = self._node_names.get(pool.pool.name)
        if names is None:
            names = tuple(pool.pool.node_name(self.name, i) for i in range(pool.pool.nodes))
            self._node_names[pool.pool.name] = names
        return names

    @cached_property
    def _node_names(self) -> dict[str, tuple[str, ...]]:
        return {}

    # GPU nodes kept for GPU work. A pool's node taint (`nodeTaint`, by default
    # `gpufleet.dev/gpu=present:NoSchedule`) keeps every pod that does not tolerate it off the
    # pool's nodes. The pods that may tolerate it are those that claim devices in a namespace
    # holding quota for a tier with devices in the pool: the solver counts a GPU node's CPU and
    # memory for the pods of its GPUs (hostMemoryPerGpu, cpuPerGpu), which holds only while
    # nothing else runs there. The kubelet drop-ins, the Kueue flavors and the admission
    # policies all read these members, so all three say the same.

    def tier_node_taints(self, tier: str) -> list[NodeTaint]:
        """The distinct node taints of the pools a tier takes devices from, in pool order."""
        pools = {kind.pool for kind in self.tier(tier).kinds}
        found: list[NodeTaint] = []
        for pool in self.pools:
            taint = pool.node_taint
            if pool.pool.name in pools and taint is not None and taint not in found:
                found.append(taint)
        return found

    @cached_property
    def node_taints(self) -> tuple[NodeTaint, ...]:
        """Every distinct node taint of the cluster's pools, in pool order."""
        found: list[NodeTaint] = []
        for pool in self.pools:
            taint = pool.node_taint
            if taint is not None and taint not in found:
                found.append(taint)
        return tuple(found)

    @cached_property
    def namespace_node_taints(self) -> dict[str, tuple[NodeTaint, ...]]:
        """Per team namespace holding device quota: the node taints its pods that claim
        devices may tolerate (those of the pools its tiers take devices from)."""
        found: dict[str, list[NodeTaint]] = {}
        for guarantee in self.guarantees:
            if guarantee.limit <= 0:
                continue
            held = found.setdefault(guarantee.namespace, [])
            for taint in self.tier_node_taints(guarantee.tier):
                if taint not in held:
                    held.append(taint)
        return {namespace: tuple(taints) for namespace, taints in sorted(found.items()) if taints}

    @cached_property
    def dra_extended_resources(self) -> tuple[str, ...]:
        """The extended resources the cluster's tiers serve through DRA: a pod asking for one
        gets its devices from a claim the scheduler makes, with no `spec.resourceClaims`."""
        return tuple(sorted({n for t in self.tiers if (n := t.tier.spec.extended_resource_name)}))

    @cached_property
    def tainted_node_names(self) -> tuple[NodeNames, ...]:
        """How the nodes of each tainted pool are named, by pool name: the names it lists, or
        the text before the first `{index}` of its `nodeNames` and after the last (a pod naming
        such a node in `spec.nodeName` skips the scheduler, and so every NoSchedule taint)."""
        found = []
        for pool in sorted(self.pools, key=lambda p: p.pool.name):
            name, pattern = pool.pool.name, pool.pool.name_pattern(self.name)
            if pool.node_taint is None:
                continue
            if pattern is not None:
                found.append(NodeNames(name, fixed_prefix(pattern), fixed_suffix(pattern)))
            else:
                found.append(NodeNames(name, "", "", pool.pool.listed_names))
        return tuple(found)


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

    def team_default(self, team: GrantedTeam) -> PriorityLevel | None:
        """The level a pod of the team that names no PriorityClass gets: the team's
        `defaultPriority`, else its lowest priority; None when the team may use none."""
        if self.ladder is None:
            return None
        allowed = [level for level in self.ladder.spec.levels if level.name in team.spec.priorities]
        chosen = team.spec.default_priority
        if chosen is not None:
            return next((level for level in allowed if level.name == chosen), None)
        return min(allowed, key=lambda level: (level.value, level.name), default=None)
