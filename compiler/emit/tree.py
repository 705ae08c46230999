"""One cluster's files: its rendered manifests, its kustomization and its plan."""

from __future__ import annotations

from compiler.emit.argocd import synced_kind
from compiler.emit.assemble import ClusterFiles
from compiler.emit.manifest import Manifest
from compiler.emit.registry import EMITTERS
from compiler.emit.render import render
from compiler.emit.view import ClusterView
from compiler.emit.yaml_writer import document

KUSTOMIZE_API = "kustomize.config.k8s.io/v1beta1"


def cluster_manifests(view: ClusterView) -> list[Manifest]:
    """Everything every registered emitter writes for one cluster, in a total order (by path)."""
    return sorted((m for emit in EMITTERS for m in emit(view)), key=lambda m: m.path)


def kustomization(cluster: str, manifests: list[Manifest]) -> Manifest:
    """The cluster's kustomization.yaml, listing its objects relative to itself."""
    prefix = f"clusters/{cluster}/"
    return Manifest(
        kind="Kustomization",
        name="kustomization",
        builder=_kustomization_yaml,
        values={"resources": [m.path.removeprefix(prefix) for m in manifests]},
        directory=f"clusters/{cluster}",
    )


def _kustomization_yaml(manifest: Manifest) -> str:
    """A kustomization's YAML: its resources, one a line."""
    resources = manifest.values["resources"]
    return document({"apiVersion": KUSTOMIZE_API, "kind": manifest.kind, "resources": resources})


def cluster_files(view: ClusterView) -> ClusterFiles:
    """One cluster's rendered files (synced objects, kustomization, node and Kueue config, its
    plan) and the kinds Argo CD syncs for it."""
    manifests = cluster_manifests(view)
    files = {manifest.path: render(manifest) for manifest in manifests}
    synced = [m for m in manifests if m.synced]
    kinds = [synced_kind(m, files[m.path]) for m in synced]
    files[f"clusters/{view.cluster.name}/kustomization.yaml"] = render(
        kustomization(view.cluster.name, synced)
    )
    files[f"plan/{view.cluster.name}.json"] = view.plan.to_json()
    return files, kinds
