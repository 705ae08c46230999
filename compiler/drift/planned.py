"""The nodes a cluster's policy declares, each with where the policy declares it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from compiler.diagnostics import Span
from compiler.inventory.gpus import NodeGpu
from compiler.ir import ResolvedCluster, ResolvedPool

Published = Mapping[str, tuple[NodeGpu, ...]]
"""Node name -> the GPUs its driver publishes (compiler.inventory.gpus.node_gpus), put
together once per dump for every check."""


@dataclass(frozen=True)
class PlannedNode:
    """Node `index` of `pool`, called `name`; `span` is its listed name in the policy, or the
    pool's `nodes` (a pattern names it)."""

    pool: ResolvedPool
    index: int
    name: str
    span: Span

    @property
    def shown(self) -> str:
        """`pool h100 node 3`, for notes."""
        return f"pool {self.pool.pool.name} node {self.index}"


def pool_span(cluster: ResolvedCluster, pool: ResolvedPool, *field: str | int) -> Span:
    """Where the pool (or one of its fields) is written in the cluster's file."""
    position = next(
        i for i, p in enumerate(cluster.cluster.spec.node_pools) if p.name == pool.pool.name
    )
    return cluster.cluster.source.span(("spec", "nodePools", position, *field))


def planned_nodes(cluster: ResolvedCluster) -> list[PlannedNode]:
    """Every node the policy declares, pool by pool in index order."""
    found = []
    for pool in cluster.pools:
        listed = pool.pool.listed_names is not None
        for index in range(pool.pool.nodes):
            span = (
                pool_span(cluster, pool, "nodeNames", index)
                if listed
                else pool_span(cluster, pool, "nodes")
            )
            found.append(PlannedNode(pool, index, cluster.node_name(pool, index), span))
    return found
