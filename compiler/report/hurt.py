"""What a change can hurt: the part of a review that must not be missed, most severe first.

Computed from the previous plans and out/ against the new ones, by the policy model where it
has the answer (guarantees and limits per namespace and tier, namespaces, MIG configurations
node by node) and by object identity (API group, kind, namespace, name) for what Argo CD would
delete. Pure: `gpufleet diff` and `gpufleet report` render the same list.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum

import yaml

from compiler.ir import ClusterPlan, GuaranteeKey
from compiler.ir.sync_options import SYNC_OPTIONS, kept_on_removal
from compiler.report.diff import FileChange, group_of
from compiler.report.mig import MigChange, configs_text

SHOWN = 25
"""Names listed in one sentence (nodes, objects); past that, how many more."""


class Harm(IntEnum):
    """The kinds of harm, most severe first: what breaks running work soonest comes first."""

    DRAIN = 0
    """Nodes drained to re-partition MIG: every pod on them is evicted."""
    GUARANTEE = 1
    """A guarantee drops: workloads past the new one may be preempted."""
    QUOTA = 2
    """A quota (limit) shrinks: new pods past it are refused."""
    NAMESPACE = 3
    """A namespace leaves gpufleet's management: its guardrails are gone."""
    DELETED = 4
    """Argo CD deletes (prunes) an object."""


@dataclass(frozen=True)
class Hurt:
    """One thing a change does that can hurt, in one cluster."""

    harm: Harm
    cluster: str
    size: int
    """How much: nodes drained, devices lost, 1 for a namespace or an object."""
    subject: str
    """What is hurt, for ordering within the same harm and size."""
    sentence: str
    rest: bool = False
    """Stands for the rest of its kind in its cluster (past SHOWN), so it comes last."""

    def order(self) -> tuple[int, int, str, bool, str]:
        """Most severe first: by harm, then the largest amount, then cluster and subject."""
        return (self.harm, -self.size, self.cluster, self.rest, self.subject)


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(names[:SHOWN])
    return shown + (f", and {len(names) - SHOWN} more" if len(names) > SHOWN else "")


def drains(
    cluster: str, changes: Sequence[MigChange], name: Callable[[str, int], str]
) -> list[Hurt]:
    """A Hurt per pool whose nodes change MIG configuration, naming each node (`name(pool,
    index)`): the MIG manager drains a node before it re-partitions it."""
    hurts = []
    for change in changes:
        nodes = [name(change.pool, index) for index in change.indexes]
        noun = "node" if change.nodes == 1 else "nodes"
        layouts = f"{configs_text(change.before)} -> {configs_text(change.after)}"
        hurts.append(
            Hurt(
                Harm.DRAIN,
                cluster,
                change.nodes,
                change.pool,
                f"pool {change.pool}: {change.nodes} {noun} ({change.gpus} GPUs) must be drained "
                f"to re-partition MIG ({layouts}): {_names(nodes)}",
            )
        )
    return hurts


def _by_namespace_tier(
    values: Mapping[GuaranteeKey, int],
) -> dict[tuple[str, str], tuple[str, int]]:
    """(namespace, tier) -> (team, value) from values keyed by guarantee: a quota belongs to a
    namespace, so a team renamed over the same namespace changes nothing."""
    found: dict[tuple[str, str], tuple[str, int]] = {}
    for key, value in sorted(values.items()):
        place = (key.namespace, key.tier)
        old_team, old_value = found.get(place, (key.team, 0))
        found[place] = (old_team, old_value + value)
    return found


def _shrinks(
    harm: Harm,
    what: str,
    cluster: str,
    before: Mapping[GuaranteeKey, int],
    after: Mapping[GuaranteeKey, int],
) -> list[Hurt]:
    old, new = _by_namespace_tier(before), _by_namespace_tier(after)
    hurts = []
    for (namespace, tier), (team, was) in sorted(old.items()):
        now = new.get((namespace, tier), (team, 0))[1]
        if now < was:
            hurts.append(
                Hurt(
                    harm,
                    cluster,
                    was - now,
                    f"{namespace}/{tier}",
                    f"{what} of team {team} in namespace {namespace}, tier {tier}: "
                    f"{was} -> {now} devices (-{was - now})",
                )
            )
    return hurts


def guarantees_dropping(
    cluster: str, previous: ClusterPlan, plan: ClusterPlan | None
) -> list[Hurt]:
    """A Hurt per namespace and tier whose guaranteed devices drop (to 0 when it is gone)."""
    before = {key: sum(kinds.values()) for key, kinds in previous.assignments.items()}
    after = {key: sum(kinds.values()) for key, kinds in (plan.assignments if plan else {}).items()}
    return _shrinks(Harm.GUARANTEE, "guarantee", cluster, before, after)


def quotas_shrinking(cluster: str, previous: ClusterPlan, plan: ClusterPlan | None) -> list[Hurt]:
    """A Hurt per namespace and tier whose limit shrinks (to 0 when it is gone). A previous
    plan written before plans recorded limits compares nothing."""
    return _shrinks(Harm.QUOTA, "quota", cluster, previous.limits, plan.limits if plan else {})


def namespaces_leaving(cluster: str, previous: ClusterPlan, plan: ClusterPlan | None) -> list[Hurt]:
    """A Hurt per namespace gpufleet managed and no longer does."""
    kept = set(plan.namespaces if plan else ())
    return [
        Hurt(
            Harm.NAMESPACE,
            cluster,
            1,
            namespace,
            f"namespace {namespace} leaves gpufleet's management: Argo CD keeps it and its "
            "workloads (the Namespace is synced with `Prune=false`), but no quota, queue or "
            "guardrail of gpufleet holds there any more; delete it by hand once its workloads "
            "are gone",
        )
        for namespace in sorted(set(previous.namespaces) - kept)
    ]


@dataclass(frozen=True, order=True)
class ObjectId:
    """What names an object in a cluster: two objects with the same id are the same object."""

    group: str
    kind: str
    namespace: str
    name: str

    def label(self) -> str:
        """`ResourceQuota ml-research/gpufleet-devices`, `PriorityClass training`."""
        name = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.kind} {name}"


def _synced(text: str) -> list[str]:
    """The files a kustomization.yaml lists (what Argo CD syncs), or none."""
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError:
        return []
    resources = document.get("resources") if isinstance(document, dict) else None
    return [str(r) for r in resources] if isinstance(resources, list) else []


def _object(text: str) -> tuple[ObjectId, bool] | None:
    """The object a manifest holds and whether Argo CD keeps it when it leaves out/."""
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    if not isinstance(document, dict) or not isinstance(document.get("metadata"), dict):
        return None
    metadata = document["metadata"]
    api = str(document.get("apiVersion", ""))
    annotations = metadata.get("annotations")
    options = str(annotations.get(SYNC_OPTIONS, "")) if isinstance(annotations, dict) else ""
    found = ObjectId(
        api.rpartition("/")[0],
        str(document.get("kind", "")),
        str(metadata.get("namespace") or ""),
        str(metadata.get("name", "")),
    )
    return found, kept_on_removal(options)


def _objects(texts: Mapping[str, str], listed: Sequence[str], prefix: str) -> dict[ObjectId, bool]:
    found: dict[ObjectId, bool] = {}
    for resource in listed:
        text = texts.get(prefix + resource)
        if text is not None and (parsed := _object(text)) is not None:
            found[parsed[0]] = parsed[1]
    return found


def objects_deleted(changes: Sequence[FileChange], tree: Mapping[str, str]) -> list[Hurt]:
    """A Hurt per object Argo CD would prune: synced before (listed in the cluster's old
    kustomization.yaml), synced no more, and not kept on removal (`Prune=false`: namespaces).

    Only the files that change can hold such an object: an unchanged file holds the same
    object on both sides. `tree` is the new out/, for a kustomization.yaml that is unchanged.
    """
    old: dict[str, str] = {}
    new: dict[str, str] = {}
    for change in changes:
        if change.status in ("removed", "changed", "renamed"):
            old[change.moved_from or change.path] = change.old
        if change.status in ("added", "changed", "renamed"):
            new[change.path] = change.new
    clusters = {group_of(path) for path in (*old, *new) if path.startswith("clusters/")}
    hurts = []
    for cluster in sorted(clusters):
        prefix = f"clusters/{cluster}/"
        kustomization = f"{prefix}kustomization.yaml"
        was_listed = _synced(old.get(kustomization, tree.get(kustomization, "")))
        before = _objects(old, was_listed, prefix)
        after = _objects(new, _synced(tree.get(kustomization, "")), prefix)
        gone = sorted(o.label() for o in set(before) - set(after) if not before[o])
        hurts += [Hurt(Harm.DELETED, cluster, 1, label, f"deleted: {label}") for label in gone]
        if len(gone) > SHOWN:
            del hurts[len(hurts) - len(gone) + SHOWN :]
            more = f"and {len(gone) - SHOWN} more objects deleted (`gpufleet diff` lists them)"
            hurts.append(Hurt(Harm.DELETED, cluster, 1, "", more, rest=True))
    return hurts


NOTHING_HURTS = (
    "Nothing can hurt: no node is drained, no guarantee drops, no quota shrinks, no namespace "
    "leaves gpufleet's management, no object is deleted."
)


def what_can_hurt(
    previous: Mapping[str, ClusterPlan], plans: Sequence[ClusterPlan], found: Sequence[Hurt]
) -> list[Hurt]:
    """Everything that can hurt, most severe first: what the plans say (guarantees, quotas,
    namespaces; a cluster the policies no longer have loses all of them) and what was `found`
    beside them (`drains`, `objects_deleted`)."""
    by_name = {p.cluster: p for p in plans}
    hurts = list(found)
    for cluster, before in sorted(previous.items()):
        after = by_name.get(cluster)
        hurts += guarantees_dropping(cluster, before, after)
        hurts += quotas_shrinking(cluster, before, after)
        hurts += namespaces_leaving(cluster, before, after)
    return sorted(hurts, key=Hurt.order)


def render_hurts(hurts: Sequence[Hurt]) -> str:
    """What can hurt as `#` lines, to open `gpufleet diff` (which stays a patch git applies)."""
    if not hurts:
        return f"# {NOTHING_HURTS}\n"
    lines = ["# What can hurt, most severe first:"]
    lines += [f"#   {hurt.cluster}: {hurt.sentence}" for hurt in hurts]
    return "\n".join(lines) + "\n"
