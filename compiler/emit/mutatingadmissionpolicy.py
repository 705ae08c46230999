"""MutatingAdmissionPolicies and their bindings: a team's default priority
(emit.default_priority) and the GPU-node toleration of extended-resource pods
(emit.gpu_nodes), where the cluster serves the kind."""

from __future__ import annotations

from compiler.emit.default_priority import default_priority
from compiler.emit.gpu_nodes import gpu_node_toleration
from compiler.emit.manifest import Manifest
from compiler.emit.view import ClusterView


def emit(view: ClusterView) -> list[Manifest]:
    """The cluster's mutating policies and bindings."""
    return [
        *default_priority(view.cluster, view.fleet),
        *gpu_node_toleration(view.cluster),
    ]
