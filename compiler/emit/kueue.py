"""What the Kueue emitters share (kueue.x-k8s.io/v1beta2, for clusters that run Kueue).

Per tier a ResourceFlavor (plus one for CPU and memory) naming the node taints of the tier's
pools, with the tolerations Kueue then adds to the pods it admits on them (Kueue checks a Job's
pod template before any pod exists, so a policy on pods could not make it tolerate them in
time); the cluster's root Cohort holding the solved headroom, and one child Cohort per team
cohort the policy names; a ClusterQueue per team that holds quota, admitting the team's
namespaces, with preemption derived from the priority ladder; a `default` LocalQueue in every
team namespace (it takes jobs without a queue label); a WorkloadPriorityClass per ladder level.
The Kueue manager's Configuration fragment, which maps each tier's DeviceClass to the logical
resource the queues count, is written beside the manifests but not synced.
Each kind is its own emitter (emit.resourceflavor, emit.cohort, emit.clusterqueue,
emit.localqueue, emit.workloadpriorityclass, emit.kueue_configuration).
"""

from __future__ import annotations

from typing import Any

from compiler.emit.kueue_quota import Group, Quota
from compiler.emit.manifest import provenance
from compiler.emit.waves import WAVES
from compiler.ir import GrantedTeam, ResolvedCluster
from compiler.ir.policy import PriorityLadder
from compiler.ir.sync_options import SKIP_DRY_RUN
from compiler.kueue_versions import kueue_release
from compiler.quantity import format_bytes, format_decimal


def kueue_api(cluster: ResolvedCluster) -> str | None:
    """The apiVersion of the cluster's Kueue objects, or None when the cluster runs no Kueue."""
    kueue = cluster.cluster.spec.kueue
    return kueue_release(kueue.version).api if kueue.enabled else None


def kueue_annotations(origin: str, clause: str, kind: str) -> dict[str, str]:
    """Provenance and sync wave of a Kueue object, which Argo CD must not dry-run before
    Kueue's CRDs exist."""
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


def resource_groups(groups: list[Group]) -> list[dict[str, Any]]:
    """A ClusterQueue's or Cohort's `resourceGroups`: per group its covered resources and its
    flavor's quotas (a borrowing limit only where there is one)."""
    return [
        {
            "coveredResources": list(group.covered),
            "flavors": [{"name": group.flavor, "resources": [_quota(q) for q in group.quotas]}],
        }
        for group in groups
    ]


def _quota(quota: Quota) -> dict[str, str]:
    fields = {"name": quota.resource, "nominalQuota": _amount(quota.resource, quota.nominal)}
    if quota.borrowing_limit is not None:
        fields["borrowingLimit"] = _amount(quota.resource, quota.borrowing_limit)
    return fields


def preemption(team: GrantedTeam, ladder: PriorityLadder | None) -> dict[str, Any]:
    """The ClusterQueue's `preemption`, read off the ladder.

    Guarantees are reclaimable from any borrower (`reclaimWithinCohort: Any`). A team whose
    priorities include a preempting level preempts lower priorities in its own queue; while
    borrowing it may preempt only work at or below the highest level that never preempts.
    """
    levels = ladder.spec.levels if ladder else []
    mine = [lv for lv in levels if lv.name in team.spec.priorities] or levels
    preempts = any(lv.preemption == "PreemptLowerPriority" for lv in mine)
    policy: dict[str, Any] = {
        "reclaimWithinCohort": "Any",
        "withinClusterQueue": "LowerPriority" if preempts else "Never",
    }
    passive = [lv.value for lv in levels if lv.preemption == "Never"]
    if preempts and passive:
        policy["borrowWithinCohort"] = {
            "policy": "LowerPriority",
            "maxPriorityThreshold": max(passive),
        }
    return policy
