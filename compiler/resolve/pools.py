"""Resolve node pools against the GPU catalog."""

from __future__ import annotations

import re

from compiler.catalog import Catalog
from compiler.diagnostics import Diagnostic
from compiler.model.policy import Cluster, NodePool
from compiler.resolve.fleet import ResolvedPool
from compiler.resolve.inventory import pool_device_kinds

_NODE_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
_PLACEHOLDER = re.compile(r"\{([^}]*)\}")
NODE_NAME_FIELDS = ("cluster", "pool", "index")


def node_name_problem(cluster: str, pool: NodePool) -> str | None:
    """Why a pool's `nodeNames` format cannot name its nodes, or None when it can."""
    unknown = sorted(set(_PLACEHOLDER.findall(pool.node_names)) - set(NODE_NAME_FIELDS))
    if unknown:
        return f"unknown placeholder {{{unknown[0]}}}: use {{cluster}}, {{pool}} and {{index}}"
    if pool.nodes > 1 and "{index}" not in pool.node_names:
        return "the format needs {index} so that every node gets its own name"
    for index in {0, pool.nodes - 1}:
        name = pool.node_names.format(cluster=cluster, pool=pool.name, index=index)
        if len(name) > 253 or not _NODE_NAME.match(name):
            return f"{name!r} is not a valid node name (DNS-1123 subdomain)"
    return None


def resolve_pools(
    cluster: Cluster, catalog: Catalog, problems: list[Diagnostic]
) -> tuple[ResolvedPool, ...]:
    """The cluster's pools with their models; unknown models and misuse of MIG are reported."""
    resolved: list[ResolvedPool] = []
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
                    f"node pool {pool.name!r}: {naming}",
                    cluster.source.span((*path, "nodeNames")),
                )
            )
            continue
        model = catalog.lookup(pool.gpu)
        if model is None:
            problems.append(
                Diagnostic(
                    "GF201",
                    f"unknown GPU model {pool.gpu!r}",
                    cluster.source.span((*path, "gpu")),
                    (f"known models: {', '.join(m.id for m in catalog.models)}",),
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
        resolved.append(ResolvedPool(pool, model, tuple(kinds)))
    return tuple(sorted(resolved, key=lambda p: p.pool.name))
