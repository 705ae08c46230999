"""Resolve node pools against the GPU catalog."""

from __future__ import annotations

import re

from compiler.catalog import Catalog, GpuModel
from compiler.diagnostics import Diagnostic, Problems
from compiler.ir import GroupSize, PoolTopology, ResolvedPool
from compiler.model.policy import Cluster, NodePool
from compiler.names import DNS_SUBDOMAIN_MAX, is_dns_subdomain
from compiler.resolve.inventory import pool_device_kinds
from compiler.resolve.node_names import check_unique_node_names, pool_node_names

_PLACEHOLDER = re.compile(r"\{([^}]*)\}")
NODE_NAME_FIELDS = ("cluster", "pool", "index")


def node_name_problem(cluster: str, pool: NodePool) -> tuple[str, str] | None:
    """Why a pool's `nodeNames` cannot name its nodes, and the field to point at (`nodeNames`
    or `nodes`), or None when it can."""
    listed = pool.listed_names
    if listed is not None:
        if len(listed) != pool.nodes:
            return (
                f"`nodes` is {pool.nodes} but `nodeNames` lists {len(listed)} nodes",
                "nodes",
            )
        return None
    assert isinstance(pool.node_names, str)
    unknown = sorted(set(_PLACEHOLDER.findall(pool.node_names)) - set(NODE_NAME_FIELDS))
    if unknown:
        return (
            f"unknown placeholder {{{unknown[0]}}}: use {{cluster}}, {{pool}} and {{index}}",
            "nodeNames",
        )
    if pool.nodes > 1 and "{index}" not in pool.node_names:
        return "the format needs {index} so that every node gets its own name", "nodeNames"
    for index in {0, pool.nodes - 1}:
        name = pool.node_name(cluster, index)
        if not is_dns_subdomain(name):
            return (
                f"{name!r} is not a valid node name (a DNS-1123 subdomain of at most "
                f"{DNS_SUBDOMAIN_MAX} characters)",
                "nodeNames",
            )
    return None


def pool_topology(pool: NodePool, model: GpuModel) -> PoolTopology:
    """GPUs per NUMA node and per PCIe root: the pool's own figures, else its board's."""
    board = model.board(pool.gpus_per_node)
    declared = pool.topology

    def size(own: int | None, field: str, catalog: int | None) -> GroupSize | None:
        if own is not None:
            return GroupSize(own, "the pool's topology")
        if board is None or catalog is None:
            return None
        return GroupSize(catalog, f"the catalog's board {board.id}", field in board.unverified)

    return PoolTopology(
        size(
            declared.numa_node if declared else None,
            "numaNode",
            board.numa_node if board else None,
        ),
        size(
            declared.pcie_root if declared else None,
            "pcieRoot",
            board.pcie_root if board else None,
        ),
    )


def topology_problem(pool: NodePool, topology: PoolTopology) -> str | None:
    """Why the pool's GPU groups cannot be consecutive index blocks that nest, or None."""
    numa, pcie = topology.numa_node, topology.pcie_root
    for name, group in (("numaNode", numa), ("pcieRoot", pcie)):
        if group is not None and pool.gpus_per_node % group.gpus:
            return (
                f"{name} groups of {group.gpus} GPUs ({group.origin}) do not divide its "
                f"{pool.gpus_per_node} GPUs per node"
            )
    if numa is not None and pcie is not None and numa.gpus % pcie.gpus:
        return (
            f"pcieRoot groups of {pcie.gpus} GPUs ({pcie.origin}) do not fit in numaNode "
            f"groups of {numa.gpus} ({numa.origin})"
        )
    return None


def resolve_pools(
    cluster: Cluster, catalog: Catalog, problems: Problems
) -> tuple[ResolvedPool, ...]:
    """The cluster's pools with their models; unknown models and misuse of MIG are reported."""
    resolved: list[ResolvedPool] = []
    named: list[NodePool] = []
    seen: dict[str, int] = {}
    for index, pool in enumerate(cluster.spec.node_pools):
        path = ("spec", "nodePools", index)
        if pool.name in seen:
            problems.append(
                Diagnostic(
                    "GF112",
                    f"node pool {pool.name!r} is defined twice in cluster {cluster.name}",
                    cluster.source.span((*path, "name")),
                    related=(
                        (
                            "first defined here",
                            cluster.source.span(("spec", "nodePools", seen[pool.name], "name")),
                        ),
                    ),
                )
            )
            continue
        seen[pool.name] = index
        naming = node_name_problem(cluster.name, pool)
        if naming is not None:
            problems.append(
                Diagnostic(
                    "GF216",
                    f"node pool {pool.name!r}: {naming[0]}",
                    cluster.source.span((*path, naming[1])),
                    (
                        ("leave `nodes` out: it is the number of names listed",)
                        if naming[1] == "nodes"
                        else ()
                    ),
                )
            )
            continue
        named.append(pool)
        model = catalog.lookup(pool.gpu)
        if model is None:
            problems.append(
                Diagnostic(
                    "GF201",
                    f"unknown GPU model {pool.gpu!r}",
                    cluster.source.span((*path, "gpu")),
                    (
                        f"known models: {', '.join(m.id for m in catalog.models)}",
                        "a GPU the catalog lacks can be described in a GpuModel document",
                    ),
                )
            )
            continue
        if pool.mig == "allowed" and model.mig is None:
            problems.append(
                Diagnostic(
                    "GF210",
                    f"{model.id} has no MIG: pool {pool.name!r} cannot allow it",
                    cluster.source.span((*path, "mig")),
                    ("set `mig: disabled`, or share the GPU by time-slicing instead",),
                )
            )
            continue
        kinds = pool_device_kinds(pool.name, model, pool.mig != "disabled")
        topology = pool_topology(pool, model)
        problem = topology_problem(pool, topology)
        if problem is not None:
            problems.append(
                Diagnostic(
                    "GF237",
                    f"node pool {pool.name!r} of cluster {cluster.name}: {problem}",
                    cluster.source.span((*path, "topology"))
                    if pool.topology is not None
                    else cluster.source.span((*path, "gpusPerNode")),
                    (
                        "groups are consecutive GPU indices: each size must divide the node's "
                        "GPUs, and a PCIe root's GPUs sit on one NUMA node",
                    ),
                )
            )
        resolved.append(ResolvedPool(pool, model, tuple(kinds), topology))
    check_unique_node_names(cluster, pool_node_names(cluster, named), problems)
    return tuple(sorted(resolved, key=lambda p: p.pool.name))
