"""Kueue (kueue.x-k8s.io/v1beta2) for clusters that run it.

Per tier a ResourceFlavor (plus one for CPU and memory) naming the node taints of the tier's
pools, with the tolerations Kueue then adds to the pods it admits on them (Kueue checks a Job's
pod template before any pod exists, so a policy on pods could not make it tolerate them in
time); the cluster's root Cohort holding the solved headroom, and one child Cohort per team
cohort the policy names; a ClusterQueue per team that holds quota, admitting the team's
namespaces, with preemption derived from the priority ladder; a `default` LocalQueue in every
team namespace (it takes jobs without a queue label); a WorkloadPriorityClass per ladder level.
The Kueue manager's Configuration fragment, which maps each tier's DeviceClass to the logical
resource the queues count, is written beside the manifests but not synced
(emit.kueue_configuration).
"""

from __future__ import annotations

from typing import Any

from compiler.emit.kueue_quota import Group, cohort_groups, team_groups
from compiler.emit.manifest import Manifest, provenance
from compiler.emit.namespace import TEAM_LABEL
from compiler.emit.view import ClusterView
from compiler.emit.waves import SKIP_DRY_RUN, WAVES
from compiler.ir import GrantedTeam
from compiler.kueue_versions import kueue_release
from compiler.model.policy import PriorityLadder
from compiler.quantity import format_bytes, format_decimal
from compiler.resolve.gpu_nodes import tier_node_taints
from compiler.resolve.kueue import HOST_FLAVOR, root_cohort, team_cohort

DEFAULT_QUEUE = "default"


def _annotations(origin: str, clause: str, kind: str) -> dict[str, str]:
    return {**provenance(origin, clause, WAVES[kind]), **SKIP_DRY_RUN}


def _amount(resource: str, value: Any) -> str:
    """A quantity as Kueue's own round trip writes it: always a string. A bare integer would be
    rewritten as a string by Kueue's controller, which then owns the atomic resourceGroups and
    makes the next server-side apply of gpufleet's field manager conflict."""
    if resource == "memory":
        return format_bytes(value)
    if value.denominator == 1:
        return str(value.numerator)
    return format_decimal(value)


def render_groups(groups: list[Group]) -> list[dict[str, Any]]:
    """Resource groups as the templates lay them out."""
    return [
        {
            "covered": list(group.covered),
            "flavor": group.flavor,
            "resources": [
                {
                    "name": q.resource,
                    "nominal": _amount(q.resource, q.nominal),
                    "borrowing_limit": (
                        None
                        if q.borrowing_limit is None
                        else _amount(q.resource, q.borrowing_limit)
                    ),
                }
                for q in group.quotas
            ],
        }
        for group in groups
    ]


def preemption(team: GrantedTeam, ladder: PriorityLadder | None) -> dict[str, Any]:
    """The ClusterQueue's preemption policy, read off the ladder.

    Guarantees are reclaimable from any borrower (`reclaimWithinCohort: Any`). A team whose
    priorities include a preempting level preempts lower priorities in its own queue; while
    borrowing it may preempt only work at or below the highest level that never preempts.
    """
    levels = ladder.spec.levels if ladder else []
    mine = [lv for lv in levels if lv.name in team.spec.priorities] or levels
    preempts = any(lv.preemption == "PreemptLowerPriority" for lv in mine)
    policy: dict[str, Any] = {
        "reclaim_within_cohort": "Any",
        "within_cluster_queue": "LowerPriority" if preempts else "Never",
        "borrow_threshold": None,
    }
    passive = [lv.value for lv in levels if lv.preemption == "Never"]
    if preempts and passive:
        policy["borrow_threshold"] = max(passive)
    return policy


def emit(view: ClusterView) -> list[Manifest]:
    """Every Kueue object of the cluster (none when the cluster does not run Kueue)."""
    cluster, plan, ladder = view.cluster, view.plan, view.fleet.ladder
    if not cluster.cluster.spec.kueue.enabled:
        return []
    api = kueue_release(cluster.cluster.spec.kueue.version).api
    origin = cluster.cluster.source.origin
    name = cluster.name
    root = root_cohort(cluster)
    manifests = [
        Manifest(
            kind="ResourceFlavor",
            name=flavor,
            template="resourceflavor.yaml.j2",
            values={"api_version": api, "node_taints": [t.model_dump() for t in taints]},
            cluster=name,
            annotations=_annotations(source, clause, "ResourceFlavor"),
        )
        for flavor, source, clause, taints in [
            *(
                (t.name, t.tier.source.origin, "metadata.name", tier_node_taints(cluster, t.name))
                for t in cluster.tiers
            ),
            (HOST_FLAVOR, origin, "spec.kueue", []),
        ]
    ]
    manifests.append(
        Manifest(
            kind="Cohort",
            name=root,
            template="cohort.yaml.j2",
            values={
                "api_version": api,
                "parent": None,
                "groups": render_groups(cohort_groups(cluster, plan)),
            },
            cluster=name,
            annotations=_annotations(origin, "spec.kueue", "Cohort"),
        )
    )
    children = sorted({t.spec.cohort for t in cluster.teams if t.spec.cohort} - {root})
    for child in children:
        first = next(t for t in cluster.teams if t.spec.cohort == child)
        manifests.append(
            Manifest(
                kind="Cohort",
                name=child,
                template="cohort.yaml.j2",
                values={"api_version": api, "parent": root, "groups": []},
                cluster=name,
                annotations=_annotations(first.grant.source.origin, "cohort", "Cohort"),
            )
        )
    for team in cluster.teams:
        groups = team_groups(cluster, team)
        if not groups:
            continue
        labels = {TEAM_LABEL: team.name}
        manifests.append(
            Manifest(
                kind="ClusterQueue",
                name=team.name,
                template="clusterqueue.yaml.j2",
                values={
                    "api_version": api,
                    "cohort": team_cohort(cluster, team),
                    "team_label": TEAM_LABEL,
                    "team": team.name,
                    "preemption": preemption(team, ladder),
                    "groups": render_groups(groups),
                },
                cluster=name,
                labels=labels,
                annotations=_annotations(team.grant.source.origin, "quotas", "ClusterQueue"),
            )
        )
        manifests.extend(
            Manifest(
                kind="LocalQueue",
                name=DEFAULT_QUEUE,
                template="localqueue.yaml.j2",
                values={"api_version": api, "cluster_queue": team.name},
                cluster=name,
                namespace=namespace,
                labels=labels,
                annotations=_annotations(
                    team.grant.source.origin, f"namespaces[{namespace}]", "LocalQueue"
                ),
            )
            for namespace in team.spec.namespaces
        )
    if ladder is not None:
        manifests.extend(
            Manifest(
                kind="WorkloadPriorityClass",
                name=level.name,
                template="workloadpriorityclass.yaml.j2",
                values={
                    "api_version": api,
                    "value": level.value,
                    "description": level.description,
                },
                cluster=name,
                annotations=_annotations(
                    ladder.source.origin, f"levels[{level.name}]", "WorkloadPriorityClass"
                ),
            )
            for level in ladder.spec.levels
        )
    return manifests
