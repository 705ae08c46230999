"""The registered checks of a resolved cluster, in the order the resolver runs them.

Adding a check: write it as one generator in the module of what it checks, declare its codes
with `@cluster_check` (compiler/resolve/check.py), name its codes' pages in its docstring, and
add it here; tests/test_resolve_checks.py then runs its codes' FAIL and PASS examples on it.
"""

from __future__ import annotations

from compiler.resolve.check import ClusterCheck
from compiler.resolve.extended_resources import check_extended_resources
from compiler.resolve.features import check_fallback_quotas, check_features
from compiler.resolve.gangs import check_gangs
from compiler.resolve.kubelet import check_kubelet
from compiler.resolve.kueue import check_kueue
from compiler.resolve.sharing import check_sharing
from compiler.resolve.tier_options import check_cluster_tier_options

CLUSTER_CHECKS: tuple[ClusterCheck, ...] = (
    check_cluster_tier_options,
    check_gangs,
    check_extended_resources,
    check_kubelet,
    check_kueue,
    check_sharing,
    check_features,
    check_fallback_quotas,
)
"""Every check run on each resolved cluster; errors stop the compile, warnings are kept."""
