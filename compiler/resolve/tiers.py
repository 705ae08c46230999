"""Compile each tier's selector with the CEL engine and evaluate it against the inventory."""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

from compiler.catalog import Catalog, GpuModel, MigProfile
from compiler.cel import CelCompileError, CelEvaluationError
from compiler.cel.device_types import compile_selector
from compiler.cel.environment import CompiledExpression
from compiler.diagnostics import Diagnostic, Problems, Span
from compiler.ir import DeviceKind, ResolvedPool, TierInCluster
from compiler.load.scalar import position_in_scalar
from compiler.model.policy import Cluster, GpuTier
from compiler.resolve.check import FleetFacts, fleet_check
from compiler.resolve.selectors import (
    UnknownModel,
    device_schema,
    selected_models,
    selector_expression,
)

SELECTOR_HINT = (
    'selectors see `device.driver`, `device.attributes["<domain>"].<name>` and '
    '`device.capacity["<domain>"].<name>` (quantities: use compareTo)'
)


def check_tier(tier: GpuTier, catalog: Catalog, problems: Problems) -> bool:
    """Static checks of a tier that do not depend on a cluster; False when it is unusable."""
    select_path = ("spec", "select")
    try:
        models = selected_models(tier, catalog)
    except UnknownModel as unknown:
        problems.append(
            Diagnostic(
                "GF201",
                f"tier {tier.name!r} names unknown GPU model {unknown.name!r}",
                tier.source.span((*select_path, "models", unknown.index)),
                (f"known models and families: {', '.join(catalog.known_names())}",),
            )
        )
        return False
    partition = tier.spec.partition
    if partition is not None and tier.spec.select.cel is None:
        mig_models = [m for m in models if m.mig is not None]
        if not mig_models:
            names = ", ".join(m.id for m in models)
            problems.append(
                Diagnostic(
                    "GF210",
                    f"tier {tier.name!r} asks for MIG partition {partition} but "
                    f"{names} {'has' if len(models) == 1 else 'have'} no MIG",
                    tier.source.span(("spec", "partition")),
                    ("MIG needs A100, A30, H100, H200 or B200; use whole GPUs or time-slicing",),
                )
            )
            return False
        if not any(m.mig and m.mig.profile(partition) for m in mig_models):
            offered = sorted({p.name for m in mig_models if m.mig for p in m.mig.profiles})
            problems.append(
                Diagnostic(
                    "GF209",
                    f"no GPU selected by tier {tier.name!r} offers MIG profile {partition}",
                    tier.source.span(("spec", "partition")),
                    (f"profiles of the selected GPUs: {', '.join(offered)}",),
                )
            )
            return False
    return True


def _cel_span(tier: GpuTier, line: int, column: int) -> Span:
    """Where character (`line`, `column`) of the tier's `cel` was written."""
    if tier.spec.select.cel is None:
        return tier.source.span(("spec", "select"))
    start = tier.source.span(("spec", "select", "cel"))
    return position_in_scalar(start, tier.spec.select.cel, line, column)


def tier_in_cluster(
    tier: GpuTier,
    cluster: Cluster,
    pools: tuple[ResolvedPool, ...],
    catalog: Catalog,
    problems: Problems,
) -> TierInCluster | None:
    """The tier's selector and the device kinds of `cluster` it matches (None on error)."""
    expression = selector_expression(tier, catalog, cluster.spec.driver)
    try:
        compiled = compile_selector(expression, device_schema(cluster.spec.driver))
    except CelCompileError as error:
        problems.append(
            Diagnostic(
                "GF301",
                f"tier {tier.name!r}: CEL selector is invalid: {error.message}",
                _cel_span(tier, error.line, error.column),
                (error.hint or SELECTOR_HINT,),
            )
        )
        return None
    matched = []
    for pool in pools:
        for kind in pool.kinds:
            try:
                hit = _selects(compiled, kind.model, kind.profile, cluster.spec.driver)
            except CelEvaluationError as error:
                problems.append(
                    Diagnostic(
                        "GF302",
                        f"tier {tier.name!r}: selector fails on {kind.key} "
                        f"({kind.model.id}) in cluster {cluster.name}: {error}",
                        _cel_span(tier, 1, 1),
                        ("guard optional attributes with has(...) or the ?. operator",),
                    )
                )
                return None
            if hit:
                matched.append(kind)
    return TierInCluster(tier, expression, tuple(sorted(matched)))


@lru_cache(maxsize=65536)
def _selects(
    selector: CompiledExpression, model: GpuModel, profile: MigProfile | None, driver: str
) -> bool:
    """Whether the selector matches a device of `model` (or its MIG `profile`) as `driver`
    publishes it: the same for every pool and cluster with that model and driver."""
    device = DeviceKind("", model.id, profile.name if profile else "", model, profile)
    return selector.evaluate({"device": device.cel_device(driver)}) is True


@fleet_check("GF211")
def check_unused_tiers(facts: FleetFacts) -> Iterator[Diagnostic]:
    """GF211 (a warning) for a tier no team's quota uses.

    Examples (FAIL and PASS): docs/diagnostics/GF211.md."""
    used = {q.tier for t in facts.teams for q in t.spec.quotas}
    for tier in facts.policies.tiers:
        if tier.name not in used:
            yield Diagnostic(
                "GF211",
                f"tier {tier.name!r} is not used by any team's quota",
                tier.source.span(("metadata", "name")),
                ("remove it or give a team a quota",),
            )
