"""The policy types the IR carries: the validated objects of compiler.model, named here once.

The IR is built by resolve from the policy model's validated objects (a cluster's spec, its
pools and tiers, a team's grant and file, the ladder, the Fleet, taints, suppressions) and
carries them on purpose: their fields and source spans are what emit and report read. This is
the one module of compiler/ir that imports compiler.model, which is upstream of the IR and
never imports it; the other IR modules, emit and report name these types from here, so the
stages after resolve see the policy language only as the IR hands it over
(tests/test_stage_boundaries.py allows exactly this import).
"""

from compiler.model.base import PolicyObject
from compiler.model.cluster import Cluster, Kubelet, NodePool, NodeTaint
from compiler.model.fleet import Fleet, FleetSpec
from compiler.model.grant import Allowances, PodSecurityLevel, TeamGrant
from compiler.model.priority import PriorityLadder, PriorityLevel
from compiler.model.suppression import Suppression
from compiler.model.taint import DeviceTaint
from compiler.model.team import MemoryQoS, SharedClaim, Team, Toleration
from compiler.model.tier import GpuTier

__all__ = [
    "Allowances",
    "Cluster",
    "DeviceTaint",
    "Fleet",
    "FleetSpec",
    "GpuTier",
    "Kubelet",
    "MemoryQoS",
    "NodePool",
    "NodeTaint",
    "PodSecurityLevel",
    "PolicyObject",
    "PriorityLadder",
    "PriorityLevel",
    "SharedClaim",
    "Suppression",
    "Team",
    "TeamGrant",
    "Toleration",
]
