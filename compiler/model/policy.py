"""The policy language: the registry of kinds (one module per kind)."""

from __future__ import annotations

from compiler.model.base import API_VERSION, PolicyObject
from compiler.model.cluster import DEFAULT_DRIVER, Cluster, NodePool
from compiler.model.fleet import Fleet
from compiler.model.gpu_model import GpuModel
from compiler.model.grant import TeamGrant
from compiler.model.priority import MAX_PRIORITY, PriorityLadder, PriorityLevel
from compiler.model.taint import DeviceTaint
from compiler.model.team import Team, Toleration
from compiler.model.tier import GpuTier

KINDS: dict[str, type[PolicyObject]] = {
    "Cluster": Cluster,
    "GpuTier": GpuTier,
    "Team": Team,
    "TeamGrant": TeamGrant,
    "PriorityLadder": PriorityLadder,
    "DeviceTaint": DeviceTaint,
    "Fleet": Fleet,
    "GpuModel": GpuModel,
}

__all__ = [
    "API_VERSION",
    "DEFAULT_DRIVER",
    "KINDS",
    "MAX_PRIORITY",
    "Cluster",
    "DeviceTaint",
    "Fleet",
    "GpuModel",
    "GpuTier",
    "NodePool",
    "PolicyObject",
    "PriorityLadder",
    "PriorityLevel",
    "Team",
    "TeamGrant",
    "Toleration",
]
