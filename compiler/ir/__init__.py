"""The intermediate representation: what resolve produces, solve completes with a plan, and emit
and report read.

Every type here is frozen. resolve builds the resolved fleet (clusters, pools and their device
kinds, tiers, granted teams, guarantees, taints); solve adds a ClusterPlan per cluster. Stages
after resolve import the compiler only through this package, the catalog, cel, versions and
diagnostics (tests/test_stage_boundaries.py).
"""

from compiler.ir.devices import ALL_DISABLED, WHOLE, DeviceKind
from compiler.ir.gangs import SCOPE_WORDS, GangGroup, gang_group, match_attribute, tier_types
from compiler.ir.host import ZERO, HostShare, allocatable, fair_share, host_share, reserved
from compiler.ir.keys import WHOLE_GPU, DeviceKey, GroupKey, GuaranteeKey
from compiler.ir.kueue import HOST_FLAVOR, root_cohort, team_cohort, tier_resource
from compiler.ir.labels import TEAM_LABEL, TIER_LABEL
from compiler.ir.plan import (
    ClusterPlan,
    GangRuns,
    MigConfig,
    NodeGangs,
    Runs,
    Steering,
    TierCapacity,
    layout_devices,
    percent,
    previous_label,
    run_length,
)
from compiler.ir.resolved import (
    GroupSize,
    Guarantee,
    PoolTopology,
    ResolvedCluster,
    ResolvedFleet,
    ResolvedPool,
    ResolvedTaint,
    TaintTarget,
    TierInCluster,
    tolerates,
)
from compiler.ir.suppressions import Silenced
from compiler.ir.teams import GrantedTeam, GrantedTeamSpec, Quota

__all__ = [
    "ALL_DISABLED",
    "HOST_FLAVOR",
    "SCOPE_WORDS",
    "TEAM_LABEL",
    "TIER_LABEL",
    "WHOLE",
    "WHOLE_GPU",
    "ZERO",
    "ClusterPlan",
    "DeviceKey",
    "DeviceKind",
    "GangGroup",
    "GangRuns",
    "GrantedTeam",
    "GrantedTeamSpec",
    "GroupKey",
    "GroupSize",
    "Guarantee",
    "GuaranteeKey",
    "HostShare",
    "MigConfig",
    "NodeGangs",
    "PoolTopology",
    "Quota",
    "ResolvedCluster",
    "ResolvedFleet",
    "ResolvedPool",
    "ResolvedTaint",
    "Runs",
    "Silenced",
    "Steering",
    "TaintTarget",
    "TierCapacity",
    "TierInCluster",
    "allocatable",
    "fair_share",
    "gang_group",
    "host_share",
    "layout_devices",
    "match_attribute",
    "percent",
    "previous_label",
    "reserved",
    "root_cohort",
    "run_length",
    "team_cohort",
    "tier_resource",
    "tier_types",
    "tolerates",
]
