"""The oracle's own reading of a cluster from the policy as the user wrote it (the models of
compiler.model are its input; nothing resolve derives is used): the pools and their devices,
which devices each tier selects, the guarantees grants and team files make, and the taints.

It reads what the README and the models' docstrings say:
- a pool offers whole GPUs, plus every MIG profile of its model when `mig` is not `disabled`;
  its GPUs group by NUMA node and PCIe root as its `topology` says, else as its model's board
  does when the board has `gpusPerNode` GPUs (tests/oracle_gpus.py);
- a tier selects whole GPUs, or with `partition` that MIG profile, of the models its `models`
  (ids or families) and `architectures` name, with at least `minMemory` (a MIG device's own
  memory); a `cel` selector is evaluated by the CEL engine against each device;
- a pool's model is a built-in one or one the fleet describes (tests/oracle_models.py);
- a team is in the clusters its grant lists (default all) and its file keeps; each granted
  tier is one guarantee in the team's only namespace, unless the file uses it (its namespace,
  gang and a smaller `guaranteed`; several uses split it, each saying its share); in a
  cluster where the grant's `quotaOverrides` names the tier, the override's `guaranteed`
  (when it gives one) is what is granted there;
- a pool's nodes are named by its `nodeNames` list (node i is the i-th name; their number is
  `nodes`), or by its pattern with `{cluster}`, `{pool}` and `{index}` filled in; a name names
  one node of the cluster;
- a DeviceTaint covers its pool (default all), node (default all; an index within the pool,
  or a node's name, which says the pool too) and GPU (default all), of the pools whose whole
  GPUs its `select` (default all) selects as a tier's would, and, unless its effect is None,
  keeps devices from teams none of whose tolerations match it.

A fleet the compiler would refuse, or one using what this reading does not cover (a model it
does not know, ...), raises NotJudged: the oracle never guesses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from cel_expr_python import cel

from compiler.model.build import Policies
from compiler.model.cluster import Cluster, NodePool
from compiler.model.grant import TeamGrant, TierGrant
from compiler.model.taint import DeviceTaint
from compiler.model.team import QuotaUse, Team, Toleration
from compiler.model.tier import GpuTier, Selector
from tests.oracle_driver import Share, sharing
from tests.oracle_gpus import GIB, MIB, Gpu
from tests.oracle_host import Host, allocatable, per_device
from tests.oracle_models import Models, read_models


class NotJudged(Exception):
    """The fleet uses something the oracle's reading does not cover, or is invalid."""


@dataclass(frozen=True)
class Pool:
    """Identical nodes: how many, their GPUs, MIG mode, host room and GPU grouping."""

    name: str
    nodes: int
    width: int
    gpu: Gpu
    mig: str
    room: Host
    numa_node: int | None
    pcie_root: int | None
    names: tuple[str, ...] = ()
    """Node i's name is names[i]."""

    @property
    def profiles(self) -> tuple[str, ...]:
        """The device kinds of the pool: "" (whole GPUs) and MIG profiles it may run."""
        mig = () if self.mig == "disabled" else tuple(p.name for p in self.gpu.profiles)
        return ("", *mig)


@dataclass(frozen=True)
class Tier:
    """The devices a tier selects in one cluster, as (pool, profile or "" for whole GPUs)."""

    name: str
    kinds: frozenset[tuple[str, str]]
    share: Host
    attribute: str | None


@dataclass(frozen=True)
class Need:
    """A guarantee: `count` devices of `tier` for `team`, in gangs of `gang`."""

    key: str
    team: str
    tier: str
    count: int
    gang: int


@dataclass(frozen=True)
class Cover:
    """The GPUs of a pool a taint covers (None: every node / every GPU of a node)."""

    pool: str
    nodes: frozenset[int] | None
    gpu: int | None

    def covers(self, pool: str, node: int, gpu: int) -> bool:
        """Whether GPU `gpu` of node `node` of `pool` (and so its MIG devices) is covered."""
        return (
            pool == self.pool
            and (self.nodes is None or node in self.nodes)
            and (self.gpu is None or self.gpu == gpu)
        )


@dataclass(frozen=True)
class Taint:
    """A device taint: what it covers, whether it keeps devices from intolerant teams, and
    the teams that tolerate it."""

    name: str
    blocks: bool
    covers: tuple[Cover, ...]
    tolerated_by: frozenset[str]


@dataclass(frozen=True)
class Inventory:
    """One cluster as the oracle reads it."""

    cluster: str
    driver: str
    release: str
    pools: tuple[Pool, ...]
    tiers: dict[str, Tier] = field(hash=False)
    needs: tuple[Need, ...]
    taints: tuple[Taint, ...]

    def pool(self, name: str) -> Pool:
        """The pool called `name`."""
        return next(p for p in self.pools if p.name == name)

    def taints_on(self, pool: str, node: int, gpu: int) -> frozenset[str]:
        """The blocking taints on a GPU and its MIG devices."""
        return frozenset(
            t.name
            for t in self.taints
            if t.blocks and any(c.covers(pool, node, gpu) for c in t.covers)
        )

    def tolerated(self, team: str) -> frozenset[str]:
        """The taints `team` tolerates."""
        return frozenset(t.name for t in self.taints if team in t.tolerated_by)

    def group(self, need: Need, pool: Pool, profile: str) -> int | None:
        """GPUs per group that one gang of `need` must stay within on `pool` when it uses
        devices of `profile`: the node's width, fewer for a match attribute shared by a NUMA
        node, PCIe root or GPU; 0 when only one device shares a value; None when the devices
        cannot serve the gang (the driver does not publish the attribute on them, or the
        pool's grouping is unknown)."""
        attribute = self.tiers[need.tier].attribute
        if need.gang == 1 or attribute is None:
            return pool.width
        share = sharing(self.driver, self.release, attribute, "mig" if profile else "gpu")
        size = {
            None: None,
            Share.NODE: pool.width,
            Share.NUMA_NODE: pool.numa_node,
            Share.PCIE_ROOT: pool.pcie_root,
            Share.GPU: 1,
            Share.DEVICE: 0,
        }[share]
        if size and pool.width % size:
            raise NotJudged(f"pool {pool.name}: groups of {size} do not divide {pool.width} GPUs")
        return size


def read_cluster(policies: Policies, name: str) -> Inventory:
    """The oracle's reading of cluster `name`."""
    cluster = next((c for c in policies.clusters if c.name == name), None)
    if cluster is None:
        raise NotJudged(f"no cluster {name!r}")
    spec = cluster.spec
    models = read_models(policies.gpu_models)
    pools = tuple(_pool(cluster, p, models) for p in spec.node_pools)
    names = [n for p in pools for n in p.names]
    if len(set(names)) < len(names):
        raise NotJudged(f"cluster {name}: a node name used twice")
    tiers = {t.name: _tier(t, pools, spec.driver, models) for t in policies.tiers}
    teams = [_Team(g, _file(policies.teams, g.name)) for g in policies.grants]
    present = [t for t in teams if t.in_cluster(name)]
    needs = tuple(n for t in present for n in t.needs(tiers, name))
    for need in needs:
        if not tiers[need.tier].kinds:
            raise NotJudged(f"{need.key}: tier {need.tier} selects no device in {name}")
    taints = tuple(
        _taint(t, pools, present, spec.driver, models)
        for t in policies.taints
        if t.spec.cluster == name
    )
    return Inventory(name, spec.driver, spec.driver_version, pools, tiers, needs, taints)


def _pool(cluster: Cluster, pool: NodePool, models: Models) -> Pool:
    model = models.gpu(pool.gpu)
    if model is None:
        raise NotJudged(f"pool {pool.name}: unknown GPU {pool.gpu!r}")
    board = models.board(model, pool.gpus_per_node)
    topology = pool.topology
    numa = topology.numa_node if topology and topology.numa_node else None
    pcie = topology.pcie_root if topology and topology.pcie_root else None
    if pool.mig != "disabled" and model.geometry is None:
        raise NotJudged(f"pool {pool.name}: {model.id} has no MIG")
    return Pool(
        pool.name,
        pool.nodes,
        pool.gpus_per_node,
        model,
        pool.mig,
        allocatable(cluster.spec.kubelet, pool),
        numa or (board.numa_node or None if board else None),
        pcie or (board.pcie_root or None if board else None),
        _node_names(cluster.name, pool),
    )


def _node_names(cluster: str, pool: NodePool) -> tuple[str, ...]:
    """The names of the pool's nodes in index order: its list, or its pattern filled in."""
    if isinstance(pool.node_names, str):
        pattern = pool.node_names.replace("{cluster}", cluster).replace("{pool}", pool.name)
        names = tuple(pattern.replace("{index}", str(i)) for i in range(pool.nodes))
    else:
        names = tuple(pool.node_names)
    if len(names) != pool.nodes or any("{" in n or "}" in n for n in names):
        raise NotJudged(f"pool {pool.name}: nodeNames do not name its {pool.nodes} nodes")
    return names


def _tier(tier: GpuTier, pools: Sequence[Pool], driver: str, models: Models) -> Tier:
    spec = tier.spec
    kinds = frozenset(
        (pool.name, profile)
        for pool in pools
        for profile in pool.profiles
        if _selects(tier, pool.gpu, profile, driver, models)
    )
    return Tier(tier.name, kinds, per_device(spec), spec.gang_match_attribute)


def _selects(tier: GpuTier, model: Gpu, profile: str, driver: str, models: Models) -> bool:
    return _selector_selects(
        f"tier {tier.name}", tier.spec.select, tier.spec.partition, model, profile, driver, models
    )


def _selector_selects(
    what: str,
    select: Selector,
    partition: str | None,
    model: Gpu,
    profile: str,
    driver: str,
    models: Models,
) -> bool:
    """Whether `select` (of a tier, or of a taint with no partition) selects devices of
    `profile` ("" for whole GPUs) of `model`."""
    if select.cel is not None:
        if partition is not None:
            raise NotJudged(f"{what}: cel with partition")
        return _cel_selects(select.cel, _device(model, profile, driver))
    if (profile or None) != partition:
        return False
    if select.models:
        if not all(models.selected_by_name(name) for name in select.models):
            raise NotJudged(f"{what}: unknown model in {select.models}")
        if not any(model in models.selected_by_name(name) for name in select.models):
            return False
    if select.architectures and model.architecture not in select.architectures:
        return False
    if select.min_memory is not None:
        low, high = _memory(model, profile)
        if select.min_memory <= low:
            return True
        if select.min_memory > high:
            return False
        raise NotJudged(f"{what}: {model.id} {profile} memory near minMemory")
    return True


def _memory(model: Gpu, profile: str) -> tuple[Any, Any]:
    """A device's memory in bytes (low, high)."""
    if not profile:
        return model.memory_mib * MIB, model.memory_mib * MIB
    memory = model.instance_memory(profile)
    if memory is None:
        raise NotJudged(f"{model.id} {profile}: memory unknown")
    low, high = memory
    return low * GIB, high * GIB


def _device(model: Gpu, profile: str, driver: str) -> dict[str, Any]:
    """The CEL `device` of a device as the driver publishes it (the attributes the oracle
    knows; a selector reading others is not judged)."""
    attributes: dict[str, Any] = {
        "type": "mig" if profile else "gpu",
        "productName": model.product_name,
        "architecture": model.architecture,
    }
    if profile:
        attributes["profile"] = profile
    return {"driver": driver, "attributes": {driver: attributes}, "capacity": {driver: {}}}


@cache
def _program(expression: str) -> Any:
    try:
        return cel.NewEnv(variables={"device": cel.Type.DYN}).compile(expression)
    except RuntimeError as error:
        raise NotJudged(f"CEL {expression!r}: {error}") from None


def _cel_selects(expression: str, device: dict[str, Any]) -> bool:
    result = _program(expression).eval(data={"device": device})
    if result.type() == cel.Type.ERROR:
        raise NotJudged(f"CEL {expression!r}: {result.value()}")
    return result.plain_value() is True


def _file(files: Sequence[Team], name: str) -> Team | None:
    return next((f for f in files if f.name == name), None)


def _narrowed(what: str, granted: Sequence[Any] | None, asked: Sequence[Any] | None) -> Any:
    """The team file's list where it gives one (within the grant), else the grant's."""
    if asked is None:
        return granted
    if granted is not None and any(a not in granted for a in asked):
        raise NotJudged(f"a team asks for {what} beyond its grant")
    return asked


def tolerates(toleration: Toleration, taint: DeviceTaint) -> bool:
    """Kubernetes' rule: the same key, the same effect unless the toleration names none, and
    the same value unless the toleration's operator is Exists."""
    spec = taint.spec
    return (
        toleration.key == spec.key
        and toleration.effect in (None, spec.effect)
        and (toleration.operator == "Exists" or toleration.value == spec.value)
    )


def _within(asked: Toleration, granted: Toleration) -> bool:
    """Whether the grant's toleration tolerates every taint the asked one does."""
    return (
        asked.key == granted.key
        and granted.effect in (None, asked.effect)
        and (
            granted.operator == "Exists"
            or (asked.operator == "Equal" and asked.value == granted.value)
        )
    )


@dataclass(frozen=True)
class _Team:
    grant: TeamGrant
    file: Team | None

    @property
    def name(self) -> str:
        return self.grant.name

    def in_cluster(self, cluster: str) -> bool:
        asked = self.file.spec.clusters if self.file else None
        clusters = _narrowed("clusters", self.grant.spec.clusters, asked)
        return clusters is None or cluster in clusters

    @property
    def tolerations(self) -> Sequence[Toleration]:
        asked = self.file.spec.tolerations if self.file else None
        if asked is None:
            return self.grant.spec.tolerations
        if not all(any(_within(a, g) for g in self.grant.spec.tolerations) for a in asked):
            raise NotJudged(f"team {self.name} tolerates beyond its grant")
        return asked

    def granted(self, cluster: str) -> list[TierGrant]:
        """The grant's tiers in `cluster`: an override there replaces the guarantee or limit
        it gives (and only those); two overrides of one tier there are not judged."""
        overrides = [o for o in self.grant.spec.quota_overrides if o.cluster == cluster]
        granted = []
        for tier in self.grant.spec.quotas:
            mine = [o for o in overrides if o.tier == tier.tier]
            if len(mine) > 1:
                raise NotJudged(f"team {self.name}: {tier.tier} overridden twice in {cluster}")
            if mine:
                tier = TierGrant(
                    tier=tier.tier,
                    guaranteed=tier.guaranteed
                    if mine[0].guaranteed is None
                    else mine[0].guaranteed,
                    limit=tier.limit if mine[0].limit is None else mine[0].limit,
                )
            granted.append(tier)
        if any(o.tier not in {t.tier for t in granted} for o in overrides):
            raise NotJudged(f"team {self.name}: an override of a tier it is not granted")
        return granted

    def needs(self, tiers: dict[str, Tier], cluster: str) -> list[Need]:
        """The team's guarantees in `cluster`, one per granted tier and namespace it is used in."""
        asked = self.file.spec if self.file else None
        namespaces = _narrowed(
            "namespaces", self.grant.spec.namespaces, asked.namespaces if asked else None
        )
        uses = list(asked.quotas) if asked else []
        granted = {q.tier for q in self.grant.spec.quotas}
        if any(u.tier not in granted for u in uses) or len(granted) < len(self.grant.spec.quotas):
            raise NotJudged(f"team {self.name}: quotas beyond its grant, or a tier granted twice")
        needs = []
        for grant in self.granted(cluster):
            if grant.tier not in tiers:
                raise NotJudged(f"team {self.name}: unknown tier {grant.tier}")
            for namespace, count, gang in self._shares(
                grant, [u for u in uses if u.tier == grant.tier]
            ):
                if namespace is None and len(namespaces) != 1:
                    raise NotJudged(f"team {self.name}: which namespace for {grant.tier}?")
                namespace = namespace or namespaces[0]
                if namespace not in namespaces or count % gang:
                    raise NotJudged(f"team {self.name}: bad namespace or gang for {grant.tier}")
                key = f"{self.name}/{namespace}/{grant.tier}"
                needs.append(Need(key, self.name, grant.tier, count, gang))
        if len({n.key for n in needs}) < len(needs):
            raise NotJudged(f"team {self.name}: one tier twice in a namespace")
        return needs

    def _shares(self, grant: TierGrant, uses: list[QuotaUse]) -> list[tuple[str | None, int, int]]:
        """(namespace or None for the only one, guaranteed, gang) of each use of a granted
        tier: the grant whole unless the file uses it; one use may guarantee less; several
        split it, each saying its share."""
        if not uses:
            return [(None, grant.guaranteed, 1)]
        if len(uses) == 1:
            use = uses[0]
            count = grant.guaranteed if use.guaranteed is None else use.guaranteed
            shares = [(use.namespace, count, use.gang)]
        else:
            shares = []
            for use in uses:
                if use.guaranteed is None:
                    raise NotJudged(f"team {self.name}: a split without shares")
                shares.append((use.namespace, use.guaranteed, use.gang))
        if sum(count for _, count, _ in shares) > grant.guaranteed:
            raise NotJudged(f"team {self.name}: more guaranteed than granted")
        return shares


def _taint(
    taint: DeviceTaint, pools: Sequence[Pool], teams: Sequence[_Team], driver: str, models: Models
) -> Taint:
    spec = taint.spec
    chosen = [p for p in pools if spec.pool in (None, p.name)]
    node = spec.node
    if isinstance(node, str):
        named = [(p, p.names.index(node)) for p in chosen if node in p.names]
        if not named:
            raise NotJudged(f"taint {taint.name}: no node {node} in {spec.pool or 'the cluster'}")
        (pool, node), *_ = named
        chosen = [pool]
    if not chosen:
        raise NotJudged(f"taint {taint.name}: unknown pool {spec.pool}")
    for pool in chosen:
        if (node is not None and node >= pool.nodes) or (
            spec.device is not None and spec.device >= pool.width
        ):
            raise NotJudged(f"taint {taint.name}: no such node or GPU in pool {pool.name}")
    if spec.select is not None:  # the pools whose whole GPUs it selects
        select = spec.select
        what = f"taint {taint.name}"
        chosen = [
            p for p in chosen if _selector_selects(what, select, None, p.gpu, "", driver, models)
        ]
    nodes = None if node is None else frozenset({node})
    return Taint(
        taint.name,
        spec.effect != "None",
        tuple(Cover(p.name, nodes, spec.device) for p in chosen),
        frozenset(t.name for t in teams if any(tolerates(x, taint) for x in t.tolerations)),
    )
