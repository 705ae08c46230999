"""The resolve stage's entry point."""

from __future__ import annotations

from collections.abc import Sequence

from compiler.catalog import Catalog
from compiler.diagnostics import Diagnostic, Problems
from compiler.ir import GrantedTeam, ResolvedCluster, ResolvedFleet, TierInCluster
from compiler.model import Policies
from compiler.resolve.catalog import fleet_catalog
from compiler.resolve.check import FleetFacts
from compiler.resolve.checks import REGISTERED, Checks
from compiler.resolve.grants import granted_teams
from compiler.resolve.pools import resolve_pools
from compiler.resolve.suppressions import apply_suppressions, valid_suppressions
from compiler.resolve.taints import resolve_taints
from compiler.resolve.teams import team_guarantees
from compiler.resolve.tiers import check_tier, tier_in_cluster


def resolve(policies: Policies, catalog: Catalog, checks: Checks = REGISTERED) -> ResolvedFleet:
    """Resolve every reference of the policies against `catalog` and the GPU models they add;
    raise CompileError if any is broken. `checks` run on each resolved cluster and then on the
    whole fleet (every registered one; a test runs one alone on a fleet resolved without)."""
    problems = Problems()
    catalog = fleet_catalog(catalog, policies.gpu_models, problems)
    teams = granted_teams(policies.grants, policies.teams, policies.fleet, problems)
    usable_tiers = [t for t in policies.tiers if check_tier(t, catalog, problems)]
    cluster_names = {c.name for c in policies.clusters}

    clusters: list[ResolvedCluster] = []
    matched_anywhere: set[str] = set()
    failed: set[str] = set()
    teams_of = _teams_by_cluster(teams, [c.name for c in policies.clusters])
    for cluster in policies.clusters:
        pools = resolve_pools(cluster, catalog, problems)
        tiers: dict[str, TierInCluster] = {}
        for tier in usable_tiers:
            resolved = tier_in_cluster(tier, cluster, pools, catalog, problems)
            if resolved is None:
                failed.add(tier.name)
            else:
                tiers[tier.name] = resolved
                if resolved.kinds:
                    matched_anywhere.add(tier.name)
        present = teams_of.get(cluster.name, ())
        guarantees = [g for t in present for g in team_guarantees(t, cluster.name, tiers, problems)]
        taints = resolve_taints(
            cluster, policies.taints, pools, present, catalog, cluster.spec.driver, problems
        )
        clusters.append(
            ResolvedCluster(
                cluster,
                pools,
                tuple(t for t in tiers.values() if t.kinds),
                present,
                tuple(sorted(guarantees, key=lambda g: g.key)),
                taints,
            )
        )

    for tier in usable_tiers:
        if tier.name not in matched_anywhere | failed:
            problems.append(
                Diagnostic(
                    "GF303",
                    f"tier {tier.name!r} selects no device in any cluster: claims for it "
                    "would stay Pending",
                    tier.source.span(("spec", "select")),
                    (
                        'check models, minMemory (an "80GB" H100 reports 79.65 GiB: use 79Gi) '
                        "and partition against the node pools",
                    ),
                )
            )
    cluster_findings = [d for c in clusters for check in checks.cluster for d in check(c)]
    facts = FleetFacts(policies, tuple(teams), tuple(clusters))
    fleet_findings = [d for check in checks.fleet for d in check(facts)]
    found = Problems([*fleet_findings, *cluster_findings])
    problems.extend(found.errors)
    warnings = [*policies.warnings, *found.warnings]
    suppressions = valid_suppressions(
        policies.fleet, cluster_names, {t.name for t in teams}, problems
    )
    errors = problems.errors
    warnings, silenced = apply_suppressions(suppressions, warnings, report_unused=not errors)
    Problems([*errors, *warnings]).raise_if_errors()
    return ResolvedFleet(
        tuple(clusters), policies.ladder, policies.fleet, tuple(warnings), teams, silenced
    )


def _teams_by_cluster(
    teams: Sequence[GrantedTeam], clusters: list[str]
) -> dict[str, tuple[GrantedTeam, ...]]:
    """Each cluster's teams in policy order: those that name it, and those on every cluster."""
    found: dict[str, list[GrantedTeam]] = {name: [] for name in clusters}
    for team in teams:
        named = clusters if team.spec.clusters is None else dict.fromkeys(team.spec.clusters)
        for name in named:
            if name in found:
                found[name].append(team)
    return {name: tuple(members) for name, members in found.items()}
