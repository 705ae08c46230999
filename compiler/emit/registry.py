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
    clusterqueue,
    cohort,
    deviceclass,
    devicetaintrule,
    kubeletconfiguration,
    kueue_configuration,
    limitrange,
    localqueue,
    mig_parted_configmap,
    mutatingadmissionpolicy,
    namespace,
    nodelabels,
    priorityclass,
    resourceclaim,
    resourceclaimtemplate,
    resourceflavor,
    resourcequota,
    rolebinding,
    validatingadmissionpolicy,
    workload,
    workloadpriorityclass,
)
from compiler.emit.manifest import Manifest
from compiler.emit.view import ClusterView

Emitter = Callable[[ClusterView], list[Manifest]]

EMITTERS: tuple[Emitter, ...] = (
    clusterqueue.emit,
    cohort.emit,
    deviceclass.emit,
    devicetaintrule.emit,
    kubeletconfiguration.emit,
    kueue_configuration.emit,
    limitrange.emit,
    localqueue.emit,
    mig_parted_configmap.emit,
    mutatingadmissionpolicy.emit,
    namespace.emit,
    nodelabels.emit,
    priorityclass.emit,
    resourceclaim.emit,
    resourceclaimtemplate.emit,
    resourceflavor.emit,
    resourcequota.emit,
    rolebinding.emit,
    validatingadmissionpolicy.emit,
    workload.emit,
    workloadpriorityclass.emit,
)
"""Every output family of a cluster, one line each."""
