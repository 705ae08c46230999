"""ValidatingAdmissionPolicies and their bindings: one policy per rule family that applies
to the cluster (emit.admission builds them from the teams' entitlements)."""

from __future__ import annotations

from compiler.emit.admission import admission_manifests
from compiler.emit.manifest import Manifest
from compiler.emit.view import ClusterView


def emit(view: ClusterView) -> list[Manifest]:
    """The cluster's validating policies and bindings."""
    return admission_manifests(view.cluster, view.fleet.fleet)
