"""The CP-SAT model of one cluster.

data -> variables -> constraints: for every node group (nodes of a pool with the same taints),
configuration (whole GPUs or MIG layouts, from the catalog's placement rules) and packing
pattern (which gangs share a node, each within one group of its match attribute, within host
memory and CPU), `nodes[g,c,p]` counts nodes;
for every guarantee and device kind, `gangs[j,g,d]` counts the gangs it gets there. One
enforcement literal per guarantee lets the explainer switch clauses off. Nothing is per GPU.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

from compiler.ir import (
    WHOLE_GPU,
    GroupKey,
    Guarantee,
    GuaranteeKey,
    ResolvedCluster,
    ResolvedPool,
    allocatable,
    gang_group,
)
from compiler.solve.cpsat import cp_model
from compiler.solve.groups import NodeGroup, node_groups
from compiler.solve.node_options import NodeConfig, gpu_options, node_configs
from compiler.solve.packing import HostLimits, Item, Pattern, patterns

SOLVER_SEED = 7
MAX_EXTRA_NODES = 100_000


@dataclass(frozen=True)
class Scenario:
    """What a model is asked: which taints hold, and which pool may grow (to find a fix)."""

    active_taints: frozenset[str] | None = None
    """None: every taint of the cluster."""
    growable_pool: str | None = None


@dataclass
class ClusterModel:
    """A built model with handles to its variables."""

    cluster: ResolvedCluster
    scenario: Scenario
    model: cp_model.CpModel = field(default_factory=lambda: cp_model.CpModel())  # lazy: lazy.py
    groups: list[NodeGroup] = field(default_factory=list)
    configs: dict[GroupKey, list[NodeConfig]] = field(default_factory=dict)
    patterns: dict[tuple[GroupKey, int], list[Pattern]] = field(default_factory=dict)
    nodes: dict[tuple[GroupKey, int, int], cp_model.IntVar] = field(default_factory=dict)
    gangs: dict[tuple[GuaranteeKey, GroupKey, str], cp_model.IntVar] = field(default_factory=dict)
    enabled: dict[GuaranteeKey, cp_model.IntVar] = field(default_factory=dict)
    served: dict[GuaranteeKey, cp_model.LinearExprT] = field(default_factory=dict)
    items: dict[tuple[GuaranteeKey, GroupKey, str], Item] = field(default_factory=dict)
    """(guarantee key, group key, device) -> the item one gang of the guarantee is there."""
    extra: cp_model.IntVar | None = None

    def config_vars(self, group: GroupKey, config: int) -> list[cp_model.IntVar]:
        """The node counts of a group running one configuration, one per packing pattern."""
        return [self.nodes[group, config, p] for p in range(len(self.patterns[group, config]))]

    def config_nodes(self, group: GroupKey, config: int) -> cp_model.LinearExprT:
        """Nodes of a group running one configuration."""
        return sum(self.config_vars(group, config))

    def free_whole_gpus(self) -> cp_model.LinearExpr:
        """Whole GPUs that no guarantee uses: the objective's tie-breaker."""
        whole = {
            (g.key, c): config.whole_gpus
            for g in self.groups
            for c, config in enumerate(self.configs[g.key])
        }
        terms = [(var, whole[g, c]) for (g, c, _), var in self.nodes.items() if whole[g, c]]
        terms += [
            (var, -self.guarantee(key).gang)
            for (key, _, device), var in self.gangs.items()
            if device == WHOLE_GPU
        ]
        return cp_model.LinearExpr.weighted_sum([v for v, _ in terms], [w for _, w in terms])

    def guarantee(self, key: GuaranteeKey) -> Guarantee:
        """The guarantee with `key`."""
        return self.cluster.guarantee(key)


def host_limits(cluster: ResolvedCluster, pool: ResolvedPool) -> HostLimits:
    """A node's allocatable memory (bytes) and CPU (millicores): capacity minus reservations and
    eviction, rounded down."""
    node = allocatable(pool.pool, cluster.cluster.spec.kubelet)
    return HostLimits(max(math.floor(node.memory), 0), max(math.floor(node.cpu * 1000), 0))


def tolerated(cluster: ResolvedCluster, guarantee: Guarantee) -> frozenset[str]:
    """The taints of the cluster a guarantee's team tolerates."""
    return frozenset(t.name for t in cluster.taints if guarantee.team.name in t.tolerated_by)


def guarantee_items(
    cluster: ResolvedCluster, group: NodeGroup
) -> dict[tuple[GuaranteeKey, str], Item]:
    """(guarantee key, device) -> the item one gang of it is, for devices of the group's pool."""
    items: dict[tuple[GuaranteeKey, str], Item] = {}
    pool, width = group.pool.pool.name, group.pool.pool.gpus_per_node
    for guarantee in cluster.guarantees:
        tier = cluster.tier(guarantee.tier)
        kinds = [kind for kind in tier.kinds if kind.pool == pool]
        if not kinds:
            continue
        spec = tier.tier.spec
        within = width if guarantee.gang == 1 else gang_group(cluster, tier, group.pool).gpus
        for kind in kinds:
            items[guarantee.key, kind.device] = Item(
                kind.device,
                guarantee.gang,
                math.ceil(spec.host_memory_per_gpu or 0),
                math.ceil((spec.cpu_per_gpu or 0) * 1000),
                tolerated(cluster, guarantee) & group.taints,
                1 if within is None else within,  # unknown grouping: refused at resolve
            )
    return items


def _group_configs(
    cluster: ResolvedCluster, group: NodeGroup, items: list[Item]
) -> list[NodeConfig]:
    profiles = {
        k.profile_name
        for g in cluster.guarantees
        for k in cluster.tier(g.tier).kinds
        if k.pool == group.pool.pool.name and k.profile_name
    }
    options = gpu_options(group.pool, profiles if group.allows_mig else set())
    groups = tuple(sorted({i.within for i in items if i.size > 1}))
    usable = frozenset(
        t for t in {frozenset(), *group.device_taints} if any(t <= i.tolerates for i in items)
    )
    return node_configs(group.pool, options, group.device_taints, groups, usable)


EVERYTHING = Scenario()
"""The scenario of the policy as written: every taint, no pool grown."""


def build_model(
    cluster: ResolvedCluster, scenario: Scenario = EVERYTHING, require_all: bool = True
) -> ClusterModel:
    """Build the model; with require_all each enabled guarantee must be served in full."""
    built = ClusterModel(cluster, scenario)
    model = built.model
    built.groups = node_groups(cluster, scenario.active_taints)
    if scenario.growable_pool is not None:  # added nodes come without taints
        built.groups += [
            NodeGroup(
                p,
                (),
                frozenset(),
                (frozenset(),) * p.pool.gpus_per_node,
                GroupKey(p.pool.name, added=True),
            )
            for p in cluster.pools
            if p.pool.name == scenario.growable_pool
        ]
    supply: dict[tuple[GroupKey, Item], list[cp_model.LinearExprT]] = defaultdict(list)
    grows = scenario.growable_pool
    if grows is not None:
        built.extra = model.new_int_var(0, MAX_EXTRA_NODES, f"extra[{grows}]")
    item_of: dict[tuple[GuaranteeKey, GroupKey, str], Item] = {}
    for group in built.groups:
        items = guarantee_items(cluster, group)
        item_of.update({(key, group.key, device): i for (key, device), i in items.items()})
        host = host_limits(cluster, group.pool)
        built.configs[group.key] = _group_configs(cluster, group, list(items.values()))
        grown = group.key.added
        bound = MAX_EXTRA_NODES if grown else group.count
        members = []
        for ci, config in enumerate(built.configs[group.key]):
            found = patterns(group, config, host, list(items.values()))
            built.patterns[group.key, ci] = found
            for pi, pattern in enumerate(found):
                var = model.new_int_var(0, bound, f"nodes[{group.key},{config.label},{pi}]")
                built.nodes[group.key, ci, pi] = var
                members.append(var)
                for item, count in pattern:
                    supply[group.key, item].append(count * var)
        size = built.extra if grown and built.extra is not None else group.count
        model.add(sum(members) == size)
    built.items = item_of
    slots: dict[GuaranteeKey, list[tuple[GroupKey, str]]] = defaultdict(list)
    for owner, group_key, device in sorted(item_of):
        slots[owner].append((group_key, device))
    for guarantee in cluster.guarantees:
        _add_guarantee(built, guarantee, slots[guarantee.key], require_all)
    demand: dict[tuple[GroupKey, Item], list[cp_model.IntVar]] = defaultdict(list)
    for (key, group_key, device), var in built.gangs.items():
        demand[group_key, item_of[key, group_key, device]].append(var)
    for slot, users in demand.items():
        model.add(sum(users) <= sum(supply.get(slot, [])))
    return built


def _add_guarantee(
    built: ClusterModel,
    guarantee: Guarantee,
    slots: list[tuple[GroupKey, str]],
    require_all: bool,
) -> None:
    """The guarantee's gang variables, one per (node group, device) slot that can serve it
    (in sorted order), and its enabling literal."""
    key = guarantee.key
    literal = built.model.new_bool_var(f"enabled[{key}]")
    built.enabled[key] = literal
    most = guarantee.count // guarantee.gang
    parts = []
    for group_key, device in slots:
        var = built.model.new_int_var(0, most, f"gangs[{key},{group_key},{device}]")
        built.model.add(var == 0).only_enforce_if(~literal)
        built.gangs[key, group_key, device] = var
        parts.append(var)
    served = guarantee.gang * sum(parts) if parts else 0
    built.served[key] = served
    if require_all:
        built.model.add(served == guarantee.count).only_enforce_if(literal)
    else:
        built.model.add(served <= guarantee.count)


def new_solver(time_limit: float) -> cp_model.CpSolver:
    """A solver with fixed parameters so the same input always gives the same plan."""
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = SOLVER_SEED
    solver.parameters.max_time_in_seconds = max(time_limit, 0.001)
    return solver
