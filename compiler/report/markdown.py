"""The Markdown capacity report: what a reviewer needs to approve a quota change at 2 a.m.

Pure: the resolved fleet, its plans and (optionally) the previous plans in, Markdown out.
Written to out/report.md on compile (without a comparison, so it is a function of the
policies alone) and printed by `gpufleet report` (compared with a previous plan).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from compiler.diagnostics import CODES, Diagnostic
from compiler.ir import ClusterPlan, ResolvedCluster, ResolvedFleet
from compiler.ir.policy import PolicyObject
from compiler.report.compare import fleet_changes
from compiler.report.diff import FileChange
from compiler.report.hurt import Hurt, drains, what_can_hurt
from compiler.report.mig import MigChange, configs_text, mig_changes, pool_configurations
from compiler.report.sections import capacity_section, files_section, hurt_section
from compiler.report.tables import table


@dataclass(frozen=True)
class Previous:
    """The plans to compare with, where they were read from (shown in the report), what
    changes in out/ from there and the objects Argo CD would delete (`objects_deleted`)."""

    plans: Mapping[str, ClusterPlan]
    label: str
    files: tuple[FileChange, ...] = ()
    deleted: tuple[Hurt, ...] = ()


def gpus_per_node(cluster: ResolvedCluster) -> dict[str, int]:
    """GPUs per node of each pool of a cluster."""
    return {p.pool.name: p.pool.gpus_per_node for p in cluster.pools}


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _tier_rows(plan: ClusterPlan) -> list[list[object]]:
    rows: list[list[object]] = []
    for tier in sorted(plan.tiers, key=lambda t: t.tier):
        limit = f"{tier.limit} (over capacity)" if tier.limit > tier.usable else tier.limit
        rows.append(
            [
                tier.tier,
                tier.capacity,
                tier.tainted,
                tier.usable,
                tier.guaranteed,
                limit,
                f"{tier.headroom} ({tier.headroom_share})",
                tier.borrowable,
                tier.limit - tier.guaranteed,
            ]
        )
    return rows


def _cluster_section(
    cluster: ResolvedCluster, plan: ClusterPlan, drains: list[MigChange] | None
) -> list[str]:
    lines = [f"## Cluster {cluster.name}", ""]
    header = [
        "Tier",
        "Raw",
        "Tainted",
        "Usable",
        "Guaranteed",
        "Limit",
        "Headroom",
        "Borrowable",
        "Borrowing",
    ]
    lines += [*table(header, _tier_rows(plan), (1, 2, 3, 4, 5, 6, 7, 8)), ""]
    per_node = gpus_per_node(cluster)
    pools = [
        [pool, per_node.get(pool, "-"), sum(configs.values()), configs_text(configs)]
        for pool, configs in pool_configurations(plan).items()
    ]
    lines += ["**MIG plan** (nodes per `nvidia.com/mig.config`)", ""]
    lines += table(["Pool", "GPUs per node", "Nodes", "Configurations"], pools, (1, 2))
    lines.append("")
    if drains is None:
        return lines
    if not drains:
        lines += ["**Nodes to drain**: none; no GPU changes MIG configuration.", ""]
        return lines
    lines += ["**Nodes to drain** (their MIG configuration changes)", ""]
    rows = [
        [c.pool, c.nodes, c.gpus, configs_text(c.before), configs_text(c.after)] for c in drains
    ]
    lines += table(["Pool", "Nodes", "GPUs", "Before", "After"], rows, (1, 2))
    lines.append("")
    return lines


def _team_rows(fleet: ResolvedFleet) -> list[list[object]]:
    values = {level.name: level.value for level in fleet.ladder.spec.levels} if fleet.ladder else {}
    rows: list[list[object]] = []
    for cluster in sorted(fleet.clusters, key=lambda c: c.name):
        for guarantee in cluster.guarantees:
            team = guarantee.team
            priorities = ", ".join(
                f"{name} ({values[name]})" if name in values else name
                for name in team.spec.priorities
            )
            rows.append(
                [
                    team.name,
                    priorities or "-",
                    cluster.name,
                    guarantee.namespace,
                    guarantee.tier,
                    guarantee.count,
                    guarantee.limit,
                    guarantee.gang,
                    _held_by(cluster) if guarantee.count else "-",
                ]
            )
    return sorted(rows, key=lambda r: (str(r[0]), str(r[2]), str(r[3]), str(r[4])))


def _held_by(cluster: ResolvedCluster) -> str:
    """What makes a guarantee hold in the cluster: Kueue reserves it (admits the team up to it
    and reclaims it from borrowers); without Kueue it is only the namespace's quota (a limit):
    nothing keeps other teams' running pods off the devices it counts on."""
    return "Kueue reserves it" if cluster.cluster.spec.kueue.enabled else "quota only"


def _origins(fleet: ResolvedFleet) -> dict[str, str]:
    objects: list[PolicyObject | None] = [fleet.ladder, fleet.fleet]
    for team in fleet.teams:
        objects += [team.grant, team.file]
    for cluster in fleet.clusters:
        objects += [cluster.cluster, *(t.tier for t in cluster.tiers)]
    return {o.source.file: o.source.origin for o in objects if o is not None}


def _warning(diagnostic: Diagnostic, origins: Mapping[str, str]) -> str:
    where = ""
    if diagnostic.span is not None:
        where = f" ({origins.get(diagnostic.span.file, diagnostic.span.file)})"
    name = CODES[diagnostic.code].name
    return f"- `{diagnostic.code}` {name}{where}: {diagnostic.message}"


def node_namer(cluster: ResolvedCluster) -> Callable[[str, int], str]:
    """The name of node `index` of the pool named `pool` in a cluster."""
    pools = {p.pool.name: p for p in cluster.pools}
    return lambda pool, index: cluster.node_name(pools[pool], index)


def mig_drains(
    fleet: ResolvedFleet, plans: Sequence[ClusterPlan], previous: Mapping[str, ClusterPlan]
) -> dict[str, list[MigChange]]:
    """Per cluster, the pools whose nodes change MIG configuration against `previous`."""
    by_name = {c.name: c for c in fleet.clusters}
    return {
        p.cluster: mig_changes(previous.get(p.cluster), p, gpus_per_node(by_name[p.cluster]))
        for p in plans
    }


def hurts(
    fleet: ResolvedFleet,
    plans: Sequence[ClusterPlan],
    previous: Mapping[str, ClusterPlan],
    deleted: Sequence[Hurt],
) -> list[Hurt]:
    """What can hurt, most severe first (hurt.what_can_hurt with the nodes named)."""
    by_name = {c.name: c for c in fleet.clusters}
    drained = [
        hurt
        for cluster, changes in mig_drains(fleet, plans, previous).items()
        for hurt in drains(cluster, changes, node_namer(by_name[cluster]))
    ]
    return what_can_hurt(previous, plans, [*drained, *deleted])


def _changes_section(plans: tuple[ClusterPlan, ...], previous: Previous) -> list[str]:
    lines = ["## What changes", ""]
    if not previous.plans:
        return [*lines, f"No previous plan in `{previous.label}` to compare with.", ""]
    lines += [f"Compared with the plans in `{previous.label}`.", ""]
    sentences = []
    for cluster, changes in fleet_changes(previous.plans, plans).items():
        sentences += [f"- **{cluster}**: {sentence}" for sentence in changes]
    lines += sentences or ["Nothing changes in capacity, guarantees or MIG configuration."]
    lines.append("")
    return lines


def build_report(
    fleet: ResolvedFleet,
    plans: tuple[ClusterPlan, ...],
    previous: Previous | None = None,
) -> str:
    """The report as Markdown; with `previous`, what changes and which nodes to drain."""
    guarantees = sum(len(c.guarantees) for c in fleet.clusters)
    lines = [
        "# gpufleet capacity report",
        "",
        f"{_count(len(fleet.clusters), 'cluster')}, {_count(guarantees, 'guarantee')}: "
        "every guarantee fits.",
        "",
    ]
    if previous is not None:
        found = hurts(fleet, plans, previous.plans, previous.deleted)
        lines += hurt_section(found, previous.label, bool(previous.plans))
    lines += [
        "Per tier: raw devices its selector reaches; tainted, those with a blocking device "
        "taint; usable, those some team holding the tier tolerates; headroom, usable devices "
        "nobody is guaranteed; borrowable, untainted devices no guarantee needs (what the Kueue "
        "cohort lends, to anyone); borrowing, what teams may use above their guarantees "
        "(limit - guaranteed).",
        "",
    ]
    drains: dict[str, list[MigChange]] | None = None
    if previous is not None:
        drains = mig_drains(fleet, plans, previous.plans)
        lines += _changes_section(plans, previous)
        lines += capacity_section(previous.plans, plans)
        lines += files_section(previous.files)
    by_name = {p.cluster: p for p in plans}
    for cluster in sorted(fleet.clusters, key=lambda c: c.name):
        plan = by_name[cluster.name]
        lines += _cluster_section(cluster, plan, None if drains is None else drains[cluster.name])
    header = [
        "Team",
        "Priorities",
        "Cluster",
        "Namespace",
        "Tier",
        "Guaranteed",
        "Limit",
        "Gang",
        "Guarantee held by",
    ]
    lines += ["## Teams", "", *table(header, _team_rows(fleet), (5, 6, 7)), ""]
    if any(not c.cluster.spec.kueue.enabled and c.guarantees for c in fleet.clusters):
        lines += [
            "A guarantee held by *quota only* (a cluster without Kueue) is a promise that the "
            "devices exist, not a reservation: ResourceQuota caps each namespace at its limit, "
            "but another team's pods, admitted first, may hold the devices a guarantee counts "
            "on until they end. Where Kueue runs, it admits each team up to its guarantee and "
            "reclaims it from borrowers.",
            "",
        ]
    origins = _origins(fleet)
    # no line numbers, a fixed order: reordering documents in a file changes nothing here
    warnings_text = sorted({_warning(w, origins) for w in fleet.warnings})
    lines += ["## Warnings", ""]
    lines += warnings_text or ["None."]
    lines += _suppressions_section(fleet, origins)
    return "\n".join(lines) + "\n"


def _suppressions_section(fleet: ResolvedFleet, origins: Mapping[str, str]) -> list[str]:
    """The fleet's suppressions, each with its scope, its reason and what it silenced
    (nothing when the fleet has none): a reviewer sees what is no longer warned about."""
    if not fleet.suppressions:
        return []
    lines = ["", "## Suppressed warnings", ""]
    for silenced in fleet.suppressions:
        wanted = silenced.suppression
        where = origins.get(silenced.span.file, silenced.span.file)
        count = _count(len(silenced.findings), "warning")
        reason = " ".join(wanted.reason.split())
        lines.append(
            f"- `{wanted.code}` {CODES[wanted.code].name}, {silenced.scope} ({where}): "
            f"{count} silenced. Reason: {reason}"
        )
        # messages, not positions: moving a line changes nothing here
        lines += sorted({f"  - {finding.message}" for finding in silenced.findings})
    return lines
