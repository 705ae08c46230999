"""Resolve device taints: which devices each covers and which teams tolerate it."""

from __future__ import annotations

from collections.abc import Iterator

from compiler.catalog import Catalog
from compiler.cel import CelCompileError, CelEvaluationError
from compiler.cel.device_types import compile_selector
from compiler.diagnostics import Diagnostic, Problems
from compiler.ir import GrantedTeam, ResolvedPool, ResolvedTaint, TaintTarget, tolerates
from compiler.model.policy import Cluster, DeviceTaint
from compiler.model.tier import GpuTier, GpuTierSpec
from compiler.resolve.check import FleetFacts, fleet_check
from compiler.resolve.node_names import PoolNodeNames, close_names, find_node, pool_node_names
from compiler.resolve.selectors import UnknownModel, device_schema, selector_expression


def resolve_taints(
    cluster: Cluster,
    taints: tuple[DeviceTaint, ...],
    pools: tuple[ResolvedPool, ...],
    teams: tuple[GrantedTeam, ...],
    catalog: Catalog,
    driver: str,
    problems: Problems,
) -> tuple[ResolvedTaint, ...]:
    """The cluster's taints with their targets; bad references are reported."""
    by_name = {p.pool.name: p for p in pools}
    naming = pool_node_names(cluster, [p.pool for p in pools])
    resolved = []
    for taint in taints:
        if taint.spec.cluster != cluster.name:
            continue
        named = _named_node(taint, naming)
        if isinstance(named, Diagnostic):
            problems.append(named)
            continue
        if named is not None:
            taint = _by_index(taint, *named)
        targets = _targets(taint, by_name, catalog, driver, problems)
        if targets is None:
            continue
        tolerant = tuple(
            sorted(t.name for t in teams if any(tolerates(x, taint) for x in t.spec.tolerations))
        )
        resolved.append(ResolvedTaint(taint, targets, tolerant))
    return tuple(sorted(resolved, key=lambda r: r.name))


def _named_node(
    taint: DeviceTaint, naming: list[PoolNodeNames]
) -> tuple[str, int] | Diagnostic | None:
    """(pool, index) of the node a taint names by name; None when it names none by name;
    the diagnostic when no pool of the cluster (or not its `pool`) has the name."""
    spec = taint.spec
    if not isinstance(spec.node, str):
        return None
    within = [n for n in naming if spec.pool in (None, n.pool.name)]
    found = find_node(within, spec.node)
    if found is not None:
        return found[0].pool.name, found[1]
    if spec.pool is not None and not within:
        return None  # the unknown pool is reported with the other references
    elsewhere = find_node(naming, spec.node)
    hints = (
        (f"node {spec.node!r} is in pool {elsewhere[0].pool.name!r}",)
        if elsewhere is not None
        else tuple(f"did you mean {name!r}?" for name in close_names(within, spec.node)[:1])
    )
    where = f"pool {spec.pool!r}" if spec.pool is not None else f"cluster {spec.cluster!r}"
    return Diagnostic(
        "GF215",
        f"taint {taint.name!r} names node {spec.node!r}, which {where} does not have",
        taint.source.span(("spec", "node")),
        hints,
    )


def _by_index(taint: DeviceTaint, pool: str, index: int) -> DeviceTaint:
    """The taint with its node given by pool and index (as found from its name)."""
    spec = taint.spec.model_copy(update={"pool": pool, "node": index})
    copy = taint.model_copy(update={"spec": spec})
    copy._source = taint.source
    return copy


def _targets(
    taint: DeviceTaint,
    pools: dict[str, ResolvedPool],
    catalog: Catalog,
    driver: str,
    problems: Problems,
) -> tuple[TaintTarget, ...] | None:
    spec, source = taint.spec, taint.source
    if spec.pool is not None and spec.pool not in pools:  # its node, if named, was not looked up
        problems.append(
            Diagnostic(
                "GF214",
                f"taint {taint.name!r} names pool {spec.pool!r}, which cluster "
                f"{spec.cluster!r} does not have",
                source.span(("spec", "pool")),
                (f"pools: {', '.join(sorted(pools))}",),
            )
        )
        return None
    assert not isinstance(spec.node, str), "a node named by name is found first (_by_index)"
    node = spec.node
    if spec.pool is not None:
        pool = pools[spec.pool]
        if node is not None and node >= pool.pool.nodes:
            problems.append(
                Diagnostic(
                    "GF215",
                    f"taint {taint.name!r}: pool {pool.pool.name!r} has nodes 0 to "
                    f"{pool.pool.nodes - 1}, not {spec.node}",
                    source.span(("spec", "node")),
                )
            )
            return None
        candidates = [pool]
    else:
        candidates = sorted(pools.values(), key=lambda p: p.pool.name)
    if spec.device is not None:
        too_small = [p for p in candidates if spec.device >= p.pool.gpus_per_node]
        if too_small and (spec.pool is not None or len(too_small) == len(candidates)):
            small = too_small[0].pool
            problems.append(
                Diagnostic(
                    "GF215",
                    f"taint {taint.name!r}: device {spec.device} does not exist on "
                    f"{small.name!r} nodes ({small.gpus_per_node} GPUs each)",
                    source.span(("spec", "device")),
                )
            )
            return None
        candidates = [p for p in candidates if p not in too_small]
    if spec.select is not None:
        selected = _selected_pools(taint, candidates, catalog, driver, problems)
        if selected is None:
            return None
        candidates = selected
    nodes = (node,) if node is not None else None
    return tuple(TaintTarget(p, nodes, spec.device) for p in candidates)


def _selected_pools(
    taint: DeviceTaint,
    pools: list[ResolvedPool],
    catalog: Catalog,
    driver: str,
    problems: Problems,
) -> list[ResolvedPool] | None:
    """Pools whose GPUs (whole-GPU device kind) the taint's selector selects."""
    assert taint.spec.select is not None
    as_tier = GpuTier.model_construct(
        api_version="gpufleet.dev/v1alpha1",
        kind="GpuTier",
        metadata=taint.metadata,
        spec=GpuTierSpec.model_construct(select=taint.spec.select, partition=None),
    )
    as_tier._source = taint.source
    try:
        expression = selector_expression(as_tier, catalog, driver)
        compiled = compile_selector(expression, device_schema(driver))
        return [
            p for p in pools if compiled.evaluate({"device": p.kinds[0].cel_device(driver)}) is True
        ]
    except UnknownModel as unknown:
        problems.append(
            Diagnostic(
                "GF201",
                f"taint {taint.name!r} names unknown GPU model {unknown.name!r}",
                taint.source.span(("spec", "select", "models", unknown.index)),
                (f"known models and families: {', '.join(catalog.known_names())}",),
            )
        )
    except (CelCompileError, CelEvaluationError) as error:
        hint = error.hint if isinstance(error, CelCompileError) else None
        problems.append(
            Diagnostic(
                "GF301",
                f"taint {taint.name!r}: selector is invalid: {error}",
                taint.source.span(("spec", "select")),
                (hint,) if hint else (),
            )
        )
    return None


@fleet_check("GF204", tested_elsewhere=("GF204",))
def check_taint_clusters(facts: FleetFacts) -> Iterator[Diagnostic]:
    """GF204 for a device taint naming a cluster the fleet does not have.

    GF204's page shows a team naming an unknown cluster (check_team_clusters); this one's
    examples are in tests/test_resolve_checks.py."""
    cluster_names = {c.name for c in facts.policies.clusters}
    for taint in facts.policies.taints:
        if taint.spec.cluster not in cluster_names:
            yield Diagnostic(
                "GF204",
                f"taint {taint.name!r} names unknown cluster {taint.spec.cluster!r}",
                taint.source.span(("spec", "cluster")),
                (f"clusters: {', '.join(sorted(cluster_names))}",),
            )


@fleet_check("GF217")
def check_untolerated_taints(facts: FleetFacts) -> Iterator[Diagnostic]:
    """GF217 (a warning) for a device taint that keeps work off its devices and that no team
    tolerates: the devices serve nobody.

    Examples (FAIL and PASS): docs/diagnostics/GF217.md."""
    for cluster in facts.clusters:
        for taint in cluster.taints:
            if taint.blocks_scheduling and not taint.tolerated_by:
                yield Diagnostic(
                    "GF217",
                    f"device taint {taint.name!r} ({taint.taint.spec.key}) is tolerated by no "
                    "team: its devices serve nobody",
                    taint.taint.source.span(("spec", "key")),
                    (
                        "give the team that should use these devices a matching toleration, or "
                        "remove the taint once the devices are repaired",
                    ),
                    cluster=cluster.name,
                )
