"""The node names of a cluster: finding a node by its name, and no name used twice.

A pool names its nodes by a pattern (`{cluster}-{pool}-{index}`) or lists them. A node name is
also the DRA pool name of the node's devices, so a name two nodes share would make a
DeviceTaintRule or a MIG label reach both: the names of a cluster must be unique. Patterns are
not expanded to compare them (a pool may have 100,000 nodes): a pattern becomes a regular
expression, and two patterns are compared name by name only where their fixed parts allow a
common name at all.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

from compiler.diagnostics import Diagnostic, Problems
from compiler.ir.node_names import INDEX, fixed_prefix, fixed_suffix
from compiler.model.policy import Cluster, NodePool

_INDEX_DIGITS = "(?P<index>0|[1-9][0-9]*)"
"""How `{index}` is written in a name: a decimal number without leading zeros."""


@dataclass(frozen=True)
class PoolNodeNames:
    """How the nodes of one pool of a cluster are named."""

    cluster: str
    pool: NodePool
    position: int
    """The pool's position in the cluster's `nodePools` (where its diagnostics point)."""

    @cached_property
    def pattern(self) -> str | None:
        """The pattern with `{cluster}` and `{pool}` filled in, or None for a list."""
        return self.pool.name_pattern(self.cluster)

    @property
    def prefix(self) -> str:
        """The fixed text before the first `{index}` of the pattern (every name starts so)."""
        return fixed_prefix(self.pattern or "")

    @property
    def suffix(self) -> str:
        """The fixed text after the last `{index}` of the pattern (every name ends so)."""
        return fixed_suffix(self.pattern or "")

    @cached_property
    def _expression(self) -> re.Pattern[str] | None:
        if self.pattern is None or INDEX not in self.pattern:
            return None
        parts = [re.escape(part) for part in self.pattern.split(INDEX)]
        groups = [_INDEX_DIGITS, *["(?P=index)"] * (len(parts) - 2)]
        text = parts[0] + "".join(g + p for g, p in zip(groups, parts[1:], strict=True))
        return re.compile(text + r"\Z")

    @cached_property
    def _listed(self) -> dict[str, int]:
        names = self.pool.listed_names or ()
        found: dict[str, int] = {}
        for index, name in enumerate(names):
            found.setdefault(name, index)
        return found

    def name(self, index: int) -> str:
        """The name of node `index`."""
        return self.pool.node_name(self.cluster, index)

    def index(self, name: str) -> int | None:
        """The index of the node called `name` in this pool, or None if it has none."""
        if self.pattern is None:
            return self._listed.get(name)
        if self._expression is None:
            return 0 if name == self.pattern else None
        found = self._expression.match(name)
        if found is None:
            return None
        index = int(found.group("index"))
        return index if index < self.pool.nodes else None

    def names(self) -> Iterable[str]:
        """Every node name of the pool, in index order."""
        return (self.name(index) for index in range(self.pool.nodes))


def pool_node_names(cluster: Cluster, pools: Iterable[NodePool]) -> list[PoolNodeNames]:
    """The naming of each of `pools` (pools of `cluster`), in the cluster's pool order."""
    positions = {id(p): i for i, p in enumerate(cluster.spec.node_pools)}
    return sorted(
        (PoolNodeNames(cluster.name, p, positions[id(p)]) for p in pools),
        key=lambda n: n.position,
    )


def find_node(pools: Sequence[PoolNodeNames], name: str) -> tuple[PoolNodeNames, int] | None:
    """The pool and index of the node called `name`, if one of `pools` has it."""
    for pool in pools:
        index = pool.index(name)
        if index is not None:
            return pool, index
    return None


def close_names(pools: Sequence[PoolNodeNames], name: str) -> list[str]:
    """Node names of `pools` that look like `name`: a did-you-mean for a misspelt one."""
    candidates: list[str] = []
    for pool in pools:
        if pool.pattern is None:
            candidates.extend(pool.pool.listed_names or ())
        elif name.startswith(pool.prefix[:1]):
            candidates.extend(pool.name(i) for i in (0, pool.pool.nodes - 1))
    return difflib.get_close_matches(name, sorted(set(candidates)), n=3, cutoff=0.6)


def check_unique_node_names(
    cluster: Cluster, pools: Sequence[PoolNodeNames], problems: Problems
) -> None:
    """Every node name of the cluster names one node: a second use is reported where it is
    written (the list entry, or the pattern), with the first; one report per pattern."""
    first: dict[str, tuple[PoolNodeNames, int]] = {}
    for position, pool in enumerate(pools):
        patterned = [p for p in pools[:position] if p.pattern is not None]
        if pool.pattern is None:
            for index, name in enumerate(pool.pool.listed_names or ()):
                seen = first.get(name) or find_node(patterned, name)
                if seen is not None:
                    _report(cluster, name, (pool, index), seen, problems)
                else:
                    first[name] = (pool, index)
            continue
        clash = next(
            (
                (name, (pool, found), seen)
                for name, seen in first.items()
                if (found := pool.index(name)) is not None
            ),
            None,
        )
        for other in patterned:
            if clash is not None:
                break
            shared = shared_name(other, pool)
            if shared is not None:
                clash = (shared[0], (pool, shared[2]), (other, shared[1]))
        if clash is not None:
            _report(cluster, *clash, problems)


def shared_name(a: PoolNodeNames, b: PoolNodeNames) -> tuple[str, int, int] | None:
    """A name pattern pools `a` and `b` both give (with its index in each), or None.

    Every name of a pattern with `{index}` starts with its prefix, then the digits of the
    index: where one prefix is not the start of the other, or continues past it with a
    non-digit, and likewise for the suffixes, no name is shared. Otherwise the smaller pool's
    names are looked up (a pattern without `{index}` names one node).
    """
    if a.pattern is None or b.pattern is None:
        return None
    indexed = INDEX in a.pattern and INDEX in b.pattern
    if indexed and not (
        _compatible(a.prefix, b.prefix) and _compatible(a.suffix[::-1], b.suffix[::-1])
    ):
        return None
    small, large = (a, b) if a.pool.nodes <= b.pool.nodes else (b, a)
    for index, name in enumerate(small.names()):
        other = large.index(name)
        if other is not None:
            return (name, index, other) if small is a else (name, other, index)
    return None


def _compatible(one: str, other: str) -> bool:
    """Whether two fixed texts, each followed by an index's digits, can begin the same name."""
    short, long = sorted((one, other), key=len)
    if not long.startswith(short):
        return False
    rest = long[len(short) :]
    return not rest or rest[0].isdigit()


def _report(
    cluster: Cluster,
    name: str,
    second: tuple[PoolNodeNames, int],
    first: tuple[PoolNodeNames, int],
    problems: Problems,
) -> None:
    pool, index = second
    earlier, earlier_index = first
    problems.append(
        Diagnostic(
            "GF238",
            f"node name {name!r} of pool {pool.pool.name!r} (node {index}) is already node "
            f"{earlier_index} of pool {earlier.pool.name!r} in cluster {cluster.name}",
            cluster.source.span(_where(pool, index)),
            (
                "a node name is the DRA pool name of its GPUs: each node of a cluster needs "
                "its own (list each node once; give patterns different fixed text)",
            ),
            (("first named here", cluster.source.span(_where(earlier, earlier_index))),),
        )
    )


def _where(pool: PoolNodeNames, index: int) -> tuple[str | int, ...]:
    path: tuple[str | int, ...] = ("spec", "nodePools", pool.position, "nodeNames")
    return (*path, index) if pool.pattern is None else path
