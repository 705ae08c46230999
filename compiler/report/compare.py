"""What a new plan changes against the previous one, as short sentences for a reviewer."""

from __future__ import annotations

from collections.abc import Mapping

from compiler.ir import ClusterPlan, GuaranteeKey, TierCapacity


def guaranteed_by_key(plan: ClusterPlan) -> dict[GuaranteeKey, int]:
    """Devices assigned to each guarantee key (`team/namespace/tier`) in a plan."""
    return {key: sum(kinds.values()) for key, kinds in sorted(plan.assignments.items())}


def _tier_sentence(before: TierCapacity, after: TierCapacity) -> str | None:
    parts = []
    if before.headroom != after.headroom or before.headroom_share != after.headroom_share:
        parts.append(
            f"headroom {before.headroom_share} -> {after.headroom_share} "
            f"({before.headroom} -> {after.headroom} devices)"
        )
    for label, old, new in (
        ("capacity", before.capacity, after.capacity),
        ("guaranteed", before.guaranteed, after.guaranteed),
        ("limit", before.limit, after.limit),
    ):
        if old != new:
            parts.append(f"{label} {old} -> {new}")
    return f"tier {after.tier}: {', '.join(parts)}" if parts else None


def plan_changes(previous: ClusterPlan | None, plan: ClusterPlan) -> list[str]:
    """Sentences naming each tier and guarantee of one cluster whose numbers moved."""
    if previous is None:
        return []
    sentences = []
    old_tiers = {t.tier: t for t in previous.tiers}
    new_tiers = {t.tier: t for t in plan.tiers}
    for name in sorted(old_tiers.keys() | new_tiers.keys()):
        old, new = old_tiers.get(name), new_tiers.get(name)
        if old is None and new is not None:
            sentences.append(
                f"tier {name} is new: capacity {new.capacity}, guaranteed {new.guaranteed}"
            )
        elif old is None or new is None:
            sentences.append(f"tier {name} is gone")
        elif (sentence := _tier_sentence(old, new)) is not None:
            sentences.append(sentence)
    old_keys, new_keys = guaranteed_by_key(previous), guaranteed_by_key(plan)
    for key in sorted(old_keys.keys() | new_keys.keys()):
        before, after = old_keys.get(key, 0), new_keys.get(key, 0)
        if before != after:
            sentences.append(f"guarantee {key}: {before} -> {after}")
    return sentences


def fleet_changes(
    previous: Mapping[str, ClusterPlan], plans: tuple[ClusterPlan, ...]
) -> dict[str, list[str]]:
    """`plan_changes` for every cluster, plus the clusters that appear or disappear."""
    changes: dict[str, list[str]] = {}
    current = {p.cluster for p in plans}
    for plan in sorted(plans, key=lambda p: p.cluster):
        if plan.cluster not in previous:
            changes[plan.cluster] = ["new cluster"] if previous else []
        else:
            changes[plan.cluster] = plan_changes(previous[plan.cluster], plan)
    for gone in sorted(previous.keys() - current):
        changes[gone] = ["cluster removed from the policies"]
    return changes
