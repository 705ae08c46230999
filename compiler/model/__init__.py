"""Model: the policy language as typed, validated objects."""

from compiler.model.build import Policies, build_policies
from compiler.model.policy import Cluster, DeviceTaint, Fleet, GpuTier, PriorityLadder, Team

__all__ = [
    "Cluster",
    "DeviceTaint",
    "Fleet",
    "GpuTier",
    "Policies",
    "PriorityLadder",
    "Team",
    "build_policies",
]
