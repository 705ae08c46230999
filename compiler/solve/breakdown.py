"""`gpufleet explain`: the capacity of each tier, pool by pool, in a solved plan."""

from __future__ import annotations

from compiler.ir import ClusterPlan, ResolvedCluster


def capacity_breakdown(cluster: ResolvedCluster, plan: ClusterPlan) -> str:
    """A plain-text table per tier and pool: devices offered, guaranteed, free, who holds them."""
    lines = [f"cluster {cluster.name} (Kubernetes {cluster.cluster.spec.kubernetes_version})"]
    for pool in cluster.pools:
        configs = ", ".join(f"{n} x {label}" for label, n in _counts(plan, pool.pool.name))
        lines.append(
            f"  pool {pool.pool.name}: {pool.pool.nodes} nodes x "
            f"{pool.pool.gpus_per_node} {pool.model.id} ({configs})"
        )
    offered = {p.pool.name: plan.devices(p.pool.name, p.pool.gpus_per_node) for p in cluster.pools}
    for tier in plan.tiers:
        lines.append(
            f"  tier {tier.tier}: capacity {tier.capacity}, guaranteed {tier.guaranteed}, "
            f"limit {tier.limit}, headroom {tier.headroom} "
            f"({tier.headroom_share})" + (f", {tier.tainted} tainted" if tier.tainted else "")
        )
        for kind in cluster.tier(tier.tier).kinds:
            holders = {
                key: per_kind[kind.key]
                for key, per_kind in plan.assignments.items()
                if kind.key in per_kind and key.tier == tier.tier
            }
            held = sum(holders.values())
            who = ", ".join(f"{k.team}/{k.namespace} {n}" for k, n in sorted(holders.items()))
            lines.append(
                f"    {kind.key!s:<24} {offered[kind.pool].get(kind.device, 0):>6} offered "
                f"{held:>6} guaranteed" + (f"  ({who})" if who else "")
            )
    return "\n".join(lines)


def _counts(plan: ClusterPlan, pool: str) -> list[tuple[str, int]]:
    counts: dict[str, int] = {}
    for label, nodes in plan.node_configs.get(pool, []):
        counts[label] = counts.get(label, 0) + nodes
    return sorted(counts.items())
