"""Assemble the whole output tree: rendered manifests, kustomizations and plans."""

from __future__ import annotations

from collections.abc import Sequence

from compiler.emit.argocd import SyncedKind, argocd_manifests, synced_kind
from compiler.emit.manifest import Manifest
from compiler.emit.registry import EMITTERS
from compiler.emit.render import render
from compiler.emit.view import ClusterView
from compiler.ir import ResolvedFleet


def cluster_manifests(view: ClusterView) -> list[Manifest]:
    """Everything every registered emitter writes for one cluster, in a total order (by path)."""
    return sorted((m for emit in EMITTERS for m in emit(view)), key=lambda m: m.path)


def kustomization(cluster: str, manifests: list[Manifest]) -> Manifest:
    """The cluster's kustomization.yaml, listing its objects relative to itself."""
    prefix = f"clusters/{cluster}/"
    return Manifest(
        kind="Kustomization",
        name="kustomization",
        template="kustomization.yaml.j2",
        values={"resources": [m.path.removeprefix(prefix) for m in manifests]},
        directory=f"clusters/{cluster}",
    )


ClusterFiles = tuple[dict[str, str], list[SyncedKind]]


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


def assemble_tree(fleet: ResolvedFleet, per_cluster: Sequence[ClusterFiles]) -> dict[str, str]:
    """Every file gpufleet owns below out/, path -> text: each cluster's files (in the fleet's
    cluster order) and the fleet-wide indexes over them."""
    tree: dict[str, str] = {}
    synced: list[SyncedKind] = []
    for files, kinds in per_cluster:
        tree.update(files)
        synced += kinds
    for manifest in argocd_manifests(fleet.fleet, [c.name for c in fleet.clusters], synced):
        tree[manifest.path] = render(manifest)
    return dict(sorted(tree.items()))
