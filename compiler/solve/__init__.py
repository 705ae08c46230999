"""Solve: prove each cluster's guarantees fit its hardware, with CP-SAT."""

from compiler.solve.explain import DEFAULT_EXPLAIN_TIME_LIMIT
from compiler.solve.plan import ClusterPlan, TierCapacity
from compiler.solve.solver import DEFAULT_TIME_LIMIT, solve_cluster, solve_fleet

__all__ = [
    "DEFAULT_EXPLAIN_TIME_LIMIT",
    "DEFAULT_TIME_LIMIT",
    "ClusterPlan",
    "TierCapacity",
    "solve_cluster",
    "solve_fleet",
]
