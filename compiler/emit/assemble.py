"""Assemble the whole output tree: every cluster's files and the fleet-wide indexes over them
(Argo CD's). Apart from the emitters (compiler.emit.tree), so that the process that writes
out/ imports only these when the clusters are rendered in worker processes."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

from compiler.emit.argocd import SyncedKind, argocd_manifests
from compiler.emit.render import render
from compiler.ir import ResolvedFleet

ClusterFiles = tuple[Mapping[str, str], list[SyncedKind]]
"""One cluster's files (path below out/ -> text) and the kinds Argo CD syncs for it."""


class OutputTree(Mapping[str, str]):
    """Every file gpufleet owns below out/, path -> text, in path order, over the mappings
    that hold them: a text is taken from its mapping only when it is read, so a cached
    cluster's texts stay packed (compiler.cache.clusters.PackedTexts) unless the write or a
    check reads them. A path in more than one part is the last one's."""

    def __init__(self, parts: Iterable[Mapping[str, str]]) -> None:
        self._parts = {path: part for part in parts for path in part}
        self._paths = sorted(self._parts)

    def __getitem__(self, path: str) -> str:
        return self._parts[path][path]

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)

    def __contains__(self, path: object) -> bool:
        return path in self._parts


def assemble_tree(
    fleet: ResolvedFleet, per_cluster: Sequence[ClusterFiles], fleet_files: Mapping[str, str]
) -> OutputTree:
    """Every file gpufleet owns below out/: each cluster's files, the fleet-wide indexes over
    them and `fleet_files` (the capacity report)."""
    synced = [kind for _, kinds in per_cluster for kind in kinds]
    names = [c.name for c in fleet.clusters]
    indexes = {m.path: render(m) for m in argocd_manifests(fleet.fleet, names, synced)}
    return OutputTree([*(files for files, _ in per_cluster), indexes, fleet_files])
