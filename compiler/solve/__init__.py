"""Solve: prove each cluster's guarantees fit its hardware, with CP-SAT.

What it adds to the IR (a ClusterPlan per cluster) is defined in compiler.ir.
"""

from compiler.solve.solver import solve_cluster, solve_fleet

__all__ = [
    "solve_cluster",
    "solve_fleet",
]
