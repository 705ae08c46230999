"""Assemble the whole output tree: every cluster's files and the fleet-wide indexes over them
(Argo CD's). Apart from the emitters (compiler.emit.tree), so that the process that writes
out/ imports only these when the clusters are rendered in worker processes."""

from __future__ import annotations

from collections.abc import Sequence

from compiler.emit.argocd import SyncedKind, argocd_manifests
from compiler.emit.render import render
from compiler.ir import ResolvedFleet

ClusterFiles = tuple[dict[str, str], list[SyncedKind]]
"""One cluster's files (path below out/ -> text) and the kinds Argo CD syncs for it."""


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
