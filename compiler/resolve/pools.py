"""Resolve node pools against the GPU catalog."""

from __future__ import annotations

from compiler.catalog import Catalog
from compiler.diagnostics import Diagnostic
from compiler.model.policy import Cluster
from compiler.resolve.fleet import ResolvedPool
from compiler.resolve.inventory import pool_device_kinds


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
        kinds = pool_device_kinds(pool.name, model, pool.mig == "allowed")
        resolved.append(ResolvedPool(pool, model, tuple(kinds)))
    return tuple(sorted(resolved, key=lambda p: p.pool.name))
