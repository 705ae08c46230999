"""The registry of emitters: every output family of a cluster, each one `emit(view)`.

An emitter is a module of compiler/emit/ named after the kind it writes, whose `emit` takes
a ClusterView and returns that family's manifests. The tree builder runs every emitter here
for every cluster; a family missing from this list is never written. Order does not matter
(the tree is sorted by path). Argo CD's files and each cluster's kustomization.yaml are not
emitters: they index what the emitters wrote (emit.argocd, emit.tree).
"""

from __future__ import annotations

from collections.abc import Callable

from compiler.emit import (
    deviceclass,
    devicetaintrule,
    kubeletconfiguration,
    kueue,
    kueue_configuration,
    limitrange,
    mutatingadmissionpolicy,
    namespace,
    node_config,
    priorityclass,
    resourceclaim,
    resourceclaimtemplate,
    resourcequota,
    rolebinding,
    validatingadmissionpolicy,
    workload,
)
from compiler.emit.manifest import Manifest
from compiler.emit.view import ClusterView

Emitter = Callable[[ClusterView], list[Manifest]]

EMITTERS: tuple[Emitter, ...] = (
    deviceclass.emit,
    devicetaintrule.emit,
    kubeletconfiguration.emit,
    kueue.emit,
    kueue_configuration.emit,
    limitrange.emit,
    mutatingadmissionpolicy.emit,
    namespace.emit,
    node_config.emit,
    priorityclass.emit,
    resourceclaim.emit,
    resourceclaimtemplate.emit,
    resourcequota.emit,
    rolebinding.emit,
    validatingadmissionpolicy.emit,
    workload.emit,
)
"""Every output family of a cluster, one line each."""
