"""The Argo CD sync waves of every emitted kind, in one total order.

Argo CD applies a lower wave before a higher one and waits for it to be healthy. What must
exist first: classes, priorities, Kueue flavors and cohorts and device taints (cluster-wide
definitions others refer to); then namespaces and ClusterQueues; then what lives in a
namespace and is checked against those (quotas, limit ranges); last what users consume
(LocalQueues pointing at ClusterQueues, claim templates charged against quotas).
"""

from __future__ import annotations

WAVE_DEFINITIONS = -3
"""DeviceClass, PriorityClass, WorkloadPriorityClass, ResourceFlavor, Cohort, DeviceTaintRule,
ValidatingAdmissionPolicy, MutatingAdmissionPolicy."""
WAVE_QUEUES_AND_NAMESPACES = -2
"""Namespace, ClusterQueue, the admission policy bindings (after the policies they bind)."""
WAVE_NAMESPACE_POLICY = -1
"""ResourceQuota, LimitRange, RoleBinding (a team may act only once its limits hold)."""
WAVE_CONSUMABLES = 1
"""LocalQueue, ResourceClaimTemplate, ResourceClaim, Workload."""

WAVES: dict[str, int] = {
    "DeviceClass": WAVE_DEFINITIONS,
    "PriorityClass": WAVE_DEFINITIONS,
    "WorkloadPriorityClass": WAVE_DEFINITIONS,
    "ResourceFlavor": WAVE_DEFINITIONS,
    "Cohort": WAVE_DEFINITIONS,
    "DeviceTaintRule": WAVE_DEFINITIONS,
    "ValidatingAdmissionPolicy": WAVE_DEFINITIONS,
    "MutatingAdmissionPolicy": WAVE_DEFINITIONS,
    "Namespace": WAVE_QUEUES_AND_NAMESPACES,
    "ValidatingAdmissionPolicyBinding": WAVE_QUEUES_AND_NAMESPACES,
    "MutatingAdmissionPolicyBinding": WAVE_QUEUES_AND_NAMESPACES,
    "ClusterQueue": WAVE_QUEUES_AND_NAMESPACES,
    "ResourceQuota": WAVE_NAMESPACE_POLICY,
    "LimitRange": WAVE_NAMESPACE_POLICY,
    "RoleBinding": WAVE_NAMESPACE_POLICY,
    "LocalQueue": WAVE_CONSUMABLES,
    "ResourceClaimTemplate": WAVE_CONSUMABLES,
    "ResourceClaim": WAVE_CONSUMABLES,
    "Workload": WAVE_CONSUMABLES,
}
"""Each synced kind's wave; a test checks every emitted object carries its kind's wave."""
