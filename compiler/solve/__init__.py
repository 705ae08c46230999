"""Solve: prove each cluster's guarantees fit its hardware, with CP-SAT.

What it adds to the IR (a ClusterPlan per cluster) is defined in compiler.ir.
"""

from compiler.solve.explain import DEFAULT_EXPLAIN_TIME_LIMIT
from compiler.solve.solver import DEFAULT_TIME_LIMIT, solve_cluster, solve_fleet

__all__ = [
    "DEFAULT_EXPLAIN_TIME_LIMIT",
    "DEFAULT_TIME_LIMIT",
    "solve_cluster",
    "solve_fleet",
]
