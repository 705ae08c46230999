"""The registered checks, in the order the resolver runs them: each resolved cluster's, then the
fleet's.

Adding a check: write it as one generator in the module of what it checks, declare its codes
with `@cluster_check` or `@fleet_check` (compiler/resolve/check.py), name its codes' pages in
its docstring, and add it here; tests/test_resolve_checks.py then runs its codes' FAIL and PASS
examples on it.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.ir import ResolvedCluster
from compiler.resolve.check import Check, FleetFacts
from compiler.resolve.extended_resources import check_extended_resources
from compiler.resolve.features import check_fallback_quotas, check_features
from compiler.resolve.gangs import check_gangs
from compiler.resolve.isolation import check_namespaces
from compiler.resolve.kubelet import check_kubelet
from compiler.resolve.kueue import check_kueue
from compiler.resolve.ladder import check_ladder
from compiler.resolve.sharing import check_shared_claims, check_sharing
from compiler.resolve.taints import check_taint_clusters, check_untolerated_taints
from compiler.resolve.teams import (
    check_namespace_owners,
    check_quotas,
    check_team_clusters,
    check_team_priorities,
)
from compiler.resolve.tier_options import (
    check_cluster_tier_options,
    check_fallback_presence,
    check_tier_options,
)
from compiler.resolve.tiers import check_unused_tiers


@dataclass(frozen=True)
class Checks:
    """The checks a resolve runs: on each resolved cluster, then on the whole fleet."""

    cluster: tuple[Check[ResolvedCluster], ...]
    fleet: tuple[Check[FleetFacts], ...]

    @property
    def every(self) -> tuple[Check[ResolvedCluster] | Check[FleetFacts], ...]:
        """Every check, cluster ones first."""
        return (*self.cluster, *self.fleet)


REGISTERED = Checks(
    cluster=(
        check_cluster_tier_options,
        check_gangs,
        check_extended_resources,
        check_kubelet,
        check_kueue,
        check_sharing,
        check_features,
        check_fallback_quotas,
    ),
    fleet=(
        check_ladder,
        check_namespaces,
        check_team_clusters,
        check_team_priorities,
        check_namespace_owners,
        check_quotas,
        check_tier_options,
        check_fallback_presence,
        check_shared_claims,
        check_taint_clusters,
        check_unused_tiers,
        check_untolerated_taints,
    ),
)
"""Every registered check; errors stop the compile, warnings are kept (their order is the
order warnings print in)."""

NO_CHECKS = Checks((), ())
"""No check at all: what a test resolves an example with before running one check on it."""
