"""An exhaustive feasibility oracle for small clusters, independent of the solver.

It reads the cluster itself (tests/oracle_policy.py: pools, tiers, guarantees and taints from
the policy as written), places MIG instances by its own tables (tests/oracle_mig.py) and
counts host memory and CPU by its own arithmetic (tests/oracle_host.py); it imports nothing
from compiler.solve, compiler.resolve or compiler.catalog (tests/test_oracle_independence.py
keeps it so).

The search differs from the solver's model too. Node by node, it lists every way the node can
be configured (whole GPUs, or per the pool's `mig` mode one MIG layout on every GPU or a layout
per GPU, projected on the profiles some guarantee can use) and, for each, every multiset of
gangs the node can hold at once: each gang takes devices of one kind its tier selects, all in
one group of its tier's match attribute, on GPUs whose blocking taints (a GPU's taint covers its
MIG devices) its team tolerates, and its devices' host shares must fit the node. Then it adds
nodes up: the guarantees hold when the sums reach every guarantee's number of gangs.
Exponential in the node's size: for the property tests' fleets of a few small nodes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from itertools import pairwise

from tests.oracle_host import Host
from tests.oracle_mig import Layout, layouts
from tests.oracle_policy import Inventory, Need, NotJudged, Pool

Vector = tuple[int, ...]
"""Gangs placed per guarantee (capped at the guarantee's number of gangs)."""
Taints = tuple[tuple[str, ...], ...]
"""Per GPU, the names of the blocking taints on it (and its MIG devices), sorted."""
Free = tuple[tuple[tuple[str, ...], Layout], ...]
"""Per GPU, its taints and the devices left: (profile or "" for the whole GPU, count) pairs."""
WHOLE: Layout = (("", 1),)
UNDECIDED: Layout = (("?", 0),)
"""A GPU of a `mig: mixed` node whose layout no gang has needed yet."""
MAX_STATES = 100_000
"""Node states the search may visit before it gives up (NotJudged), rather than run for long."""


def feasible(inventory: Inventory) -> bool:
    """Whether every guarantee of the cluster can be served at once."""
    return _Search(inventory).feasible()


@dataclass(frozen=True)
class _Gangs:
    """Gangs that can stand in for each other: one tier, gang size and set of tolerated
    taints (several guarantees may share them; their numbers of gangs add up)."""

    need: Need
    tolerated: frozenset[str]


class _Search:
    def __init__(self, inventory: Inventory) -> None:
        self.inventory = inventory
        demand: dict[tuple[str, int, frozenset[str]], int] = {}
        first: dict[tuple[str, int, frozenset[str]], Need] = {}
        for need in inventory.needs:
            if need.count:
                key = (need.tier, need.gang, inventory.tolerated(need.team))
                demand[key] = demand.get(key, 0) + need.count // need.gang
                first.setdefault(key, need)
        self.gangs = tuple(_Gangs(first[key], key[2]) for key in demand)
        self.demand = tuple(demand.values())
        self.zero = tuple(0 for _ in self.demand)
        self.nodes: dict[tuple[str, Taints], frozenset[Vector]] = {}
        self.moves: dict[tuple[str, Free, int], frozenset[Free]] = {}
        self.layouts: dict[str, list[Layout]] = {}
        self.reached: dict[tuple[str, Free, Host, int, int], frozenset[Vector]] = {}

    def feasible(self) -> bool:
        reached = frozenset({self.zero})
        for pool in self.inventory.pools:
            for node in range(pool.nodes):
                taints = tuple(
                    tuple(sorted(self.inventory.taints_on(pool.name, node, gpu)))
                    for gpu in range(pool.width)
                )
                key = (pool.name, taints)
                if key not in self.nodes:
                    self.nodes[key] = self._node(pool, taints)
                reached = _maximal(
                    {
                        tuple(min(r + a, d) for r, a, d in zip(old, add, self.demand, strict=True))
                        for old in reached
                        for add in self.nodes[key]
                    }
                )
        return self.demand in reached

    def _node(self, pool: Pool, taints: Taints) -> frozenset[Vector]:
        """The maximal gang vectors one node can hold, over every configuration. A node of a
        `mig: mixed` pool starts with every GPU undecided: a GPU takes one of its layouts when
        a gang first uses it (an unused GPU may run anything)."""
        choices = self._choices(pool)
        if pool.mig == "mixed":
            configs: list[tuple[Layout, ...]] = [(UNDECIDED,) * pool.width]
        else:
            configs = [(choice,) * pool.width for choice in choices]
        starts = {_canonical(pool, tuple(zip(taints, c, strict=True))) for c in configs}
        return _maximal({v for free in starts for v in self._reach(pool, free, pool.room, 0, 0)})

    def _choices(self, pool: Pool) -> list[Layout]:
        """What one GPU of the pool may run: whole, or a MIG layout projected on the profiles
        some guarantee can use there (a layout another one covers is left out: more devices
        never make a placement impossible)."""
        if pool.name in self.layouts:
            return self.layouts[pool.name]
        wanted = {
            profile
            for gangs in self.gangs
            for (kind_pool, profile) in self.inventory.tiers[gangs.need.tier].kinds
            if kind_pool == pool.name and profile
        }
        choices = [WHOLE]
        if pool.mig != "disabled":
            projected = {
                tuple((p, n) for p, n in layout if p in wanted) for layout in layouts(pool.gpu)
            }
            projected.discard(())
            choices += sorted(
                mine
                for mine in projected
                if not any(other != mine and _covers(other, mine) for other in projected)
            )
        self.layouts[pool.name] = choices
        return choices

    def _reach(
        self, pool: Pool, free: Free, room: Host, first: int, placed: int
    ) -> frozenset[Vector]:
        """The maximal gang vectors a node can still add from this state, placing gangs in
        the order of their classes (so each multiset is tried once per way to place it):
        `placed` gangs of class `first` are on it already, and none of a later class."""
        key = (pool.name, free, room, first, placed)
        if key in self.reached:
            return self.reached[key]
        if len(self.reached) > MAX_STATES:
            raise NotJudged(f"more than {MAX_STATES} node states: too large for the oracle")
        found = {self.zero}
        for index in range(first, len(self.gangs)):
            already = placed if index == first else 0
            if already >= self.demand[index]:
                continue
            need = self.gangs[index].need
            cost = self.inventory.tiers[need.tier].share * need.gang
            if not cost.fits_in(room):
                continue
            moves = (pool.name, free, index)
            if moves not in self.moves:
                self.moves[moves] = frozenset(
                    _canonical(pool, after) for after in self._gangs(pool, free, index)
                )
            for after in self.moves[moves]:
                for vector in self._reach(pool, after, room - cost, index, already + 1):
                    found.add(tuple(v + (i == index) for i, v in enumerate(vector)))
        result = _maximal(found)
        self.reached[key] = result
        return result

    def _gangs(self, pool: Pool, free: Free, index: int) -> Iterator[Free]:
        """Every way to take one gang of class `index` from a node's free devices."""
        need, tolerated = self.gangs[index].need, self.gangs[index].tolerated
        usable = [g for g in range(pool.width) if set(free[g][0]) <= tolerated]
        for kind_pool, profile in sorted(self.inventory.tiers[need.tier].kinds):
            if kind_pool != pool.name:
                continue
            size = self.inventory.group(need, pool, profile)
            if size is None or (size == 0 and need.gang > 1):
                continue
            blocks = (
                [[g] for g in usable]
                if size == 0
                else [
                    [g for g in usable if start <= g < start + size]
                    for start in range(0, pool.width, size)
                ]
            )
            for block in blocks:
                yield from _take(free, profile, block, need.gang, self._choices(pool))


def _canonical(pool: Pool, free: Free) -> Free:
    """The node's state up to its symmetries: GPUs within the finest group, and groups within
    the next coarser one, may be swapped (with their taints) without changing what fits."""
    sizes = sorted({s for s in (pool.pcie_root, pool.numa_node) if s and 1 < s < pool.width})
    sizes.append(pool.width)
    if any(big % small for small, big in pairwise(sizes)):
        return free
    blocks: list[Free] = [(gpu,) for gpu in free]
    done = 1
    for size in sizes:
        step = size // done
        blocks = [
            tuple(gpu for child in sorted(blocks[i : i + step]) for gpu in child)
            for i in range(0, len(blocks), step)
        ]
        done = size
    return blocks[0]


def _take(
    free: Free, profile: str, gpus: list[int], want: int, choices: list[Layout]
) -> Iterator[Free]:
    """Every way to take `want` devices of `profile` from the given GPUs (an undecided GPU
    that gives some takes a layout that has them)."""
    if want == 0:
        yield free
        return
    if not gpus:
        return
    gpu, rest = gpus[0], gpus[1:]
    taints, held = free[gpu]
    for layout in [c for c in choices if dict(c).get(profile)] if held == UNDECIDED else [held]:
        have = dict(layout).get(profile, 0)
        for take in range(min(want, have), 0, -1):
            left = tuple((p, n - take if p == profile else n) for p, n in layout)
            changed = (*free[:gpu], (taints, tuple((p, n) for p, n in left if n)), *free[gpu + 1 :])
            yield from _take(changed, profile, rest, want - take, choices)
    yield from _take(free, profile, rest, want, choices)


def _covers(big: Layout, small: Layout) -> bool:
    have = dict(big)
    return all(have.get(p, 0) >= n for p, n in small)


def _maximal(vectors: set[Vector]) -> frozenset[Vector]:
    """The vectors no other one is at least as large as, component by component."""
    return frozenset(
        v
        for v in vectors
        if not any(o != v and all(a >= b for a, b in zip(o, v, strict=True)) for o in vectors)
    )


# -- edits, for checking explanations and fixes ------------------------------------------------


def without(inventory: Inventory, guarantee: str = "", taint: str = "") -> Inventory:
    """The cluster without one guarantee or one taint."""
    return replace(
        inventory,
        needs=tuple(n for n in inventory.needs if n.key != guarantee),
        taints=tuple(t for t in inventory.taints if t.name != taint),
    )


def only(inventory: Inventory, guarantees: set[str], taints: set[str]) -> Inventory:
    """The cluster with these guarantees and, of the blocking taints, these only."""
    return replace(
        inventory,
        needs=tuple(n for n in inventory.needs if n.key in guarantees),
        taints=tuple(t for t in inventory.taints if t.name in taints or not t.blocks),
    )


def with_cuts(inventory: Inventory, cuts: dict[str, int]) -> Inventory:
    """The cluster with some guarantees cut by the given numbers of devices."""
    return replace(
        inventory,
        needs=tuple(replace(n, count=n.count - cuts.get(n.key, 0)) for n in inventory.needs),
    )


def with_nodes(inventory: Inventory, pool: str, extra: int) -> Inventory:
    """The cluster with `extra` more nodes in `pool` (a taint on every node covers them)."""
    return replace(
        inventory,
        pools=tuple(
            replace(p, nodes=p.nodes + extra) if p.name == pool else p for p in inventory.pools
        ),
    )
