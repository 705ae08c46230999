"""What every emitter reads: one cluster of the resolved fleet, with the cluster's plan."""

from __future__ import annotations

from dataclasses import dataclass

from compiler.ir import ClusterPlan, ResolvedCluster, ResolvedFleet


@dataclass(frozen=True)
class ClusterView:
    """One cluster as emit sees it: the cluster's resolved policy, the fleet it belongs to
    (fleet-wide settings, the priority ladder) and its solved plan.

    Every emitter takes one and nothing else, so every output family has the same shape and
    a cluster's objects can be built in a worker process from the view alone.
    """

    cluster: ResolvedCluster
    fleet: ResolvedFleet
    plan: ClusterPlan
