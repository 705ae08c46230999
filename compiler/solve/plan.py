"""The solved plan of one cluster: how pools are configured and who is served by what."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

WHOLE = "whole"
"""The configuration name of a GPU that is not partitioned."""


@dataclass(frozen=True)
class TierCapacity:
    """How many devices a tier's selector reaches in the plan, and how many are promised."""

    tier: str
    capacity: int
    guaranteed: int
    limit: int

    @property
    def headroom(self) -> int:
        """Devices of the tier not promised to anyone."""
        return self.capacity - self.guaranteed


@dataclass(frozen=True)
class ClusterPlan:
    """A feasible assignment for one cluster.

    `pool_configs` maps pool -> configuration (`whole` or a MIG layout name) -> GPUs;
    `assignments` maps guarantee key -> device kind key -> devices.
    """

    cluster: str
    pool_configs: dict[str, dict[str, int]]
    assignments: dict[str, dict[str, int]]
    tiers: tuple[TierCapacity, ...]

    def to_json(self) -> str:
        """The plan as stable, sorted, indented JSON (out/plan/<cluster>.json)."""
        document: dict[str, Any] = {
            "cluster": self.cluster,
            "poolConfigs": self.pool_configs,
            "assignments": self.assignments,
            "tiers": {
                t.tier: {
                    "capacity": t.capacity,
                    "guaranteed": t.guaranteed,
                    "limit": t.limit,
                    "headroom": t.headroom,
                }
                for t in self.tiers
            },
        }
        return json.dumps(document, indent=2, sort_keys=True) + "\n"
