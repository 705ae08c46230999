"""The one table of the Kueue releases gpufleet targets, and what each one's manager accepts.

Kueue reads its Configuration once at start-up and strictly: an unknown field, an unknown
feature gate or a locked gate set to its non-default value makes the manager exit. So the
Configuration gpufleet writes names only what the cluster's Kueue minor has. Neither supported
minor needs a gate for DRA accounting (`KueueDRAIntegration` is beta and on by default from
0.18; the old name `DynamicResourceAllocation` is locked off in 0.18 and gone in 0.19), so the
Configuration sets none.

Sources: sigs.k8s.io/kueue `pkg/features/kube_features.go` and
`apis/config/v1beta2/configuration_types.go` at v0.18.5 and v0.19.2 (shared/reference/peers.md).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KueueRelease:
    """What one Kueue minor serves and reads."""

    minor: str
    configuration_api: str
    """The apiVersion of the manager's Configuration."""
    api: str
    """The apiVersion of the queue objects gpufleet writes (ClusterQueue, Cohort, ...)."""


KUEUE_RELEASES: dict[str, KueueRelease] = {
    "0.18": KueueRelease("0.18", "config.kueue.x-k8s.io/v1beta2", "kueue.x-k8s.io/v1beta2"),
    "0.19": KueueRelease("0.19", "config.kueue.x-k8s.io/v1beta2", "kueue.x-k8s.io/v1beta2"),
}
NEWEST_KUEUE = "0.19"


def kueue_release(minor: str) -> KueueRelease:
    """The table row of a Kueue minor ("0.18" or "0.19")."""
    return KUEUE_RELEASES[minor]
