"""Check teams' references (clusters, tiers, priorities, namespaces) and expand their quotas."""

from __future__ import annotations

from collections.abc import Iterator

from compiler.diagnostics import Diagnostic, Problems
from compiler.ir import GrantedTeam, Guarantee, Quota, TierInCluster
from compiler.resolve.check import FleetFacts, fleet_check


@fleet_check("GF204", "GF252", tested_elsewhere=("GF252",))
def check_team_clusters(facts: FleetFacts) -> Iterator[Diagnostic]:
    """A team names only clusters of the fleet (GF204), and its grant overrides quotas only in
    clusters of the fleet (GF204) that it grants (GF252).

    Examples (FAIL and PASS): docs/diagnostics/GF204.md. GF252's page shows the grant's own
    case (resolve/grants.py); this one's is in tests/test_quota_overrides.py."""
    clusters = {c.name for c in facts.policies.clusters}
    for team in facts.teams:
        for index, name in enumerate(team.spec.clusters or []):
            if name not in clusters:
                yield Diagnostic(
                    "GF204",
                    f"team {team.name!r} names unknown cluster {name!r}",
                    team.source.span(("spec", "clusters", index)),
                    (f"clusters: {', '.join(sorted(clusters))}",),
                )
        yield from _override_clusters(team, clusters)


def _override_clusters(team: GrantedTeam, clusters: set[str]) -> Iterator[Diagnostic]:
    """GF204 for an override in an unknown cluster, GF252 for one in a cluster the grant
    does not give the team."""
    granted = team.grant.spec.clusters
    for index, override in enumerate(team.grant.spec.quota_overrides):
        span = team.grant.source.span(("spec", "quotaOverrides", index, "cluster"))
        if override.cluster not in clusters:
            yield Diagnostic(
                "GF204",
                f"the grant of team {team.name!r} overrides a quota in unknown cluster "
                f"{override.cluster!r}",
                span,
                (f"clusters: {', '.join(sorted(clusters))}",),
            )
        elif granted is not None and override.cluster not in granted:
            yield Diagnostic(
                "GF252",
                f"the grant of team {team.name!r} overrides its quota in cluster "
                f"{override.cluster!r}, which it does not grant",
                span,
                (
                    f"granted clusters: {', '.join(granted) or '(none)'}; an override only "
                    "changes a quota the grant gives",
                ),
            )


@fleet_check("GF203")
def check_team_priorities(facts: FleetFacts) -> Iterator[Diagnostic]:
    """A team's priorities are on the ladder, and its default priority is among them (GF203).

    Examples (FAIL and PASS): docs/diagnostics/GF203.md."""
    ladder = facts.policies.ladder
    levels = {level.name for level in ladder.spec.levels} if ladder else set()
    for team in facts.teams:
        for index, name in enumerate(team.spec.priorities):
            if name not in levels:
                yield Diagnostic(
                    "GF203",
                    f"team {team.name!r} names priority {name!r}, which is not on the ladder",
                    team.source.span(("spec", "priorities", index)),
                    (f"ladder: {', '.join(sorted(levels)) or '(no PriorityLadder defined)'}",),
                )
        default = team.spec.default_priority
        if default is not None and default not in team.spec.priorities:
            yield Diagnostic(
                "GF203",
                f"team {team.name!r}: defaultPriority {default!r} is not among its priorities",
                team.source.span(("spec", "defaultPriority")),
                (f"use one of: {', '.join(team.spec.priorities) or '(none: add priorities)'}",),
            )


@fleet_check("GF205")
def check_namespace_owners(facts: FleetFacts) -> Iterator[Diagnostic]:
    """Each namespace a grant gives, used or not, is granted to one team only (GF205).

    Examples (FAIL and PASS): docs/diagnostics/GF205.md."""
    owners: dict[str, GrantedTeam] = {}
    for team in facts.teams:
        grant = team.grant
        for index, namespace in enumerate(grant.spec.namespaces):
            owner = owners.setdefault(namespace, team)
            if owner is not team:
                yield Diagnostic(
                    "GF205",
                    f"namespace {namespace!r} is granted to team {owner.name!r} and "
                    f"team {team.name!r}",
                    grant.source.span(("spec", "namespaces", index)),
                    ("each namespace belongs to exactly one team",),
                    (("granted first here", owner.grant.source.span(("spec", "namespaces"))),),
                )


@fleet_check("GF202", "GF206", "GF207", "GF212", "GF213", tested_elsewhere=("GF206",))
def check_quotas(facts: FleetFacts) -> Iterator[Diagnostic]:
    """A team's quotas name known tiers (GF202) and one of its namespaces (GF207), once each
    (GF212), with a limit at least the guarantee (GF206) and whole gangs (GF213), also in
    each cluster whose grant overrides them.

    Examples (FAIL and PASS): docs/diagnostics/GF202.md, GF207.md, GF212.md, GF213.md. GF206's
    page shows the grant's own case (resolve/grants.py); this one's are in tests/test_resolve.py
    and tests/test_quota_overrides.py."""
    tiers = {t.name for t in facts.policies.tiers}
    for team in facts.teams:
        yield from _quotas(team, tiers)
        yield from _cluster_quotas(team)


def _quotas(team: GrantedTeam, tiers: set[str]) -> Iterator[Diagnostic]:
    source = team.source
    seen: set[tuple[str, str]] = set()
    for index, quota in enumerate(team.spec.quotas):
        path = ("spec", "quotas", index)
        if quota.tier not in tiers:
            yield Diagnostic(
                "GF202",
                f"team {team.name!r} has a quota for unknown tier {quota.tier!r}",
                source.span((*path, "tier")),
                (f"tiers: {', '.join(sorted(tiers))}",),
            )
        yield from _amounts(team, index, quota, "")
        quota_ns = quota_namespace(team, quota)
        if quota_ns is None:
            yield Diagnostic(
                "GF207",
                f"team {team.name!r} has several namespaces: say which one the "
                f"{quota.tier!r} quota is for",
                source.span(path),
                (
                    "say it in the team's own file: `quotas: [{tier: "
                    f"{quota.tier}, namespace: <one of {', '.join(team.spec.namespaces)}>}}]`",
                ),
            )
        elif quota_ns not in team.spec.namespaces:
            yield Diagnostic(
                "GF207",
                f"namespace {quota_ns!r} is not one of team {team.name!r}'s",
                source.span((*path, "namespace")),
                (f"the team's namespaces: {', '.join(team.spec.namespaces)}",),
            )
        elif (quota.tier, quota_ns) in seen:
            yield Diagnostic(
                "GF212",
                f"team {team.name!r} lists tier {quota.tier!r} twice for namespace {quota_ns!r}",
                source.span(path),
                ("merge the two quotas",),
            )
        seen.add((quota.tier, quota_ns or ""))


def _amounts(team: GrantedTeam, index: int, quota: Quota, where: str) -> Iterator[Diagnostic]:
    """GF206 for a limit below the guarantee, GF213 for a guarantee not a whole number of
    gangs (`where`: ` in cluster <name>` for a cluster whose grant overrides the quota)."""
    path = ("spec", "quotas", index)
    if quota.limit < quota.guaranteed:
        yield Diagnostic(
            "GF206",
            f"team {team.name!r}, tier {quota.tier!r}{where}: limit {quota.limit} is "
            f"below the guarantee {quota.guaranteed}",
            team.source.span((*path, "limit")),
            ("the limit is what the team may use when borrowing: at least the guarantee",),
        )
    if quota.guaranteed % quota.gang:
        yield Diagnostic(
            "GF213",
            f"team {team.name!r}, tier {quota.tier!r}{where}: guaranteed {quota.guaranteed} "
            f"is not a whole number of gangs of {quota.gang}",
            quota.written or team.source.span((*path, "guaranteed")),
            (
                f"guarantee a multiple of {quota.gang}, e.g. "
                f"{quota.guaranteed - quota.guaranteed % quota.gang + quota.gang}",
            ),
        )


def _cluster_quotas(team: GrantedTeam) -> Iterator[Diagnostic]:
    """The amount checks for each cluster whose grant an override changes, where its quotas
    differ from the team's quotas elsewhere (those were checked already)."""
    for cluster, quotas in team.spec.cluster_quotas:
        for index, (quota, everywhere) in enumerate(zip(quotas, team.spec.quotas, strict=True)):
            if (quota.guaranteed, quota.limit) != (everywhere.guaranteed, everywhere.limit):
                yield from _amounts(team, index, quota, f" in cluster {cluster}")


def quota_namespace(team: GrantedTeam, quota: Quota) -> str | None:
    """The namespace a quota applies to: its own, or the team's only one."""
    if quota.namespace is not None:
        return quota.namespace
    return team.spec.namespaces[0] if len(team.spec.namespaces) == 1 else None


def team_guarantees(
    team: GrantedTeam, cluster: str, tiers: dict[str, TierInCluster], problems: Problems
) -> list[Guarantee]:
    """The team's quotas in one cluster; a tier that selects nothing there is an error."""
    guarantees = []
    for index, quota in enumerate(team.spec.quotas_in(cluster)):
        tier = tiers.get(quota.tier)
        namespace = quota_namespace(team, quota)
        if namespace is None or tier is None:  # reported already: GF207, GF202 or the tier's
            continue
        if not tier.kinds:
            problems.append(
                Diagnostic(
                    "GF304",
                    f"team {team.name!r} has a quota for tier {quota.tier!r} in cluster "
                    f"{cluster!r}, but the tier selects no device there",
                    team.source.span(("spec", "quotas", index, "tier")),
                    (
                        "limit the team to clusters that have such GPUs with `clusters:`, or "
                        "widen the tier's selector",
                    ),
                )
            )
            continue
        guarantees.append(
            Guarantee(
                team,
                index,
                quota.tier,
                namespace,
                quota.guaranteed,
                quota.limit,
                quota.gang,
                quota.written,
            )
        )
    return guarantees
