"""`gpufleet inventory import`: a cluster dump in, the cluster's node pools in its policy file.

Reads the dump (compiler.inventory.read), maps every GPU to a model of the fleet's catalog
(the built-in one plus the policies' GpuModel documents), groups the GPU nodes into pools
(compiler.inventory.pools) and writes them into the file that declares the cluster, or into
`clusters/<cluster>.yaml` below the policies when none does (compiler.inventory.cluster_file),
atomically. Nothing is written when any error is found.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from compiler.catalog import Catalog, load_catalog
from compiler.catalog.driver import (
    CURRENT_DRIVER,
    DRIVER_VERSIONS,
    GPU_DEVICE,
    HEALTH_TAINTS_SINCE,
    NVIDIA_DRIVER,
    TYPE_ATTRIBUTE,
    health_taint,
    qualified,
    releases_publishing,
)
from compiler.diagnostics import CompileError, Diagnostic, Problems, Span, fail
from compiler.inventory.cluster_file import NewCluster, update_cluster_file
from compiler.inventory.dump import ClusterDump
from compiler.inventory.pools import group_pools
from compiler.inventory.read import read_dump
from compiler.load import SourceDocument, load_policies
from compiler.load.loader import display_path
from compiler.model.build import build_object
from compiler.model.gpu_model import GpuModel as GpuModelDocument
from compiler.policy_files import policy_files
from compiler.versions import KUBERNETES_VERSIONS
from compiler.write.atomic import replace_file

CLUSTERS_DIRECTORY = "clusters"
_KUBELET_VERSION = re.compile(r"^v?([0-9]+)\.([0-9]+)\.")
_CLUSTER_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


@dataclass(frozen=True)
class Imported:
    """What an import did: the file, whether it was created or changed, what changed in it,
    and the warnings found on the way."""

    file: str
    created: bool
    changed: bool
    notes: tuple[str, ...]
    pools: int
    nodes: int
    warnings: tuple[Diagnostic, ...]


def import_inventory(source: str, cluster: str, policies: Path, *, write: bool = True) -> Imported:
    """Import the dump `source` (a file, or `-` for standard input) as cluster `cluster`
    into the policies below `policies`; raises CompileError (nothing written) on any error."""
    if not _CLUSTER_NAME.match(cluster):
        raise fail(
            "GF113",
            f"--cluster {cluster!r} is not a cluster name (a DNS-1123 label)",
            None,
            "name the cluster as its policy does: lower-case letters, digits and `-`",
        )
    documents = _policy_documents(policies)
    dump, warnings = read_dump(source)
    catalog = _fleet_catalog(documents)
    problems = Problems(warnings)
    pools, found = group_pools(dump, catalog, NVIDIA_DRIVER)
    problems.extend(found)
    problems.raise_if_errors()
    if not pools:
        problems.append(
            Diagnostic(
                "GF814",
                f"the dump holds no node with {NVIDIA_DRIVER} GPUs ({len(dump.nodes)} nodes, "
                f"{len(dump.slices)} ResourceSlices)",
                Span(dump.file, 1, 1),
                (
                    "dump with `kubectl get nodes,resourceslices,devicetaintrules -o yaml` on "
                    "a cluster whose NVIDIA DRA driver runs",
                ),
            )
        )
        problems.raise_if_errors()
    target = _cluster_file(documents, policies, cluster)
    shown = display_path(target)
    update = update_cluster_file(
        target, shown, cluster, pools, catalog, _new_cluster(dump, catalog)
    )
    if update.changed and write:
        try:
            replace_file(target, update.text, "importing")
        except OSError as error:
            raise fail("GF502", f"cannot write {shown}: {error.strerror}", Span(shown)) from None
    return Imported(
        file=shown,
        created=update.created,
        changed=update.changed,
        notes=tuple(update.notes),
        pools=len(pools),
        nodes=sum(len(p.nodes) for p in pools),
        warnings=(*problems.warnings, *update.warnings),
    )


def _policy_documents(policies: Path) -> list[SourceDocument]:
    """The policy documents, or none when there is no policy yet (a first import)."""
    if not policies.is_dir() or not policy_files(policies):
        return []
    return load_policies(policies)


def _fleet_catalog(documents: Sequence[SourceDocument]) -> Catalog:
    """The built-in catalog plus the fleet's GpuModel documents (broken ones are left out:
    `gpufleet check` reports them)."""
    from compiler.resolve.catalog import fleet_catalog

    models: list[GpuModelDocument] = []
    for document in documents:
        if isinstance(document.data, dict) and document.data.get("kind") == "GpuModel":
            try:
                built = build_object(document)
            except CompileError:
                continue
            if isinstance(built, GpuModelDocument):
                models.append(built)
    return fleet_catalog(load_catalog(), sorted(models, key=lambda m: m.name), Problems())


def _cluster_file(documents: Sequence[SourceDocument], policies: Path, cluster: str) -> Path:
    """The file that declares the cluster, else `clusters/<cluster>.yaml`."""
    for document in documents:
        data = document.data
        if (
            isinstance(data, dict)
            and data.get("kind") == "Cluster"
            and isinstance(data.get("metadata"), dict)
            and data["metadata"].get("name") == cluster
        ):
            return policies / document.relative_path
    return policies / CLUSTERS_DIRECTORY / f"{cluster}.yaml"


def _new_cluster(dump: ClusterDump, catalog: Catalog) -> NewCluster:
    """The Kubernetes version (the newest kubelet's minor: the control plane is at least as
    new) and the driver release (the newest whose attribute names every GPU shows, if not
    the default) of a new cluster file."""
    minors = sorted(
        {
            (int(m.group(1)), int(m.group(2)))
            for node in dump.nodes
            if node.kubelet_version and (m := _KUBELET_VERSION.match(node.kubelet_version))
        }
    )
    version = f"{minors[-1][0]}.{minors[-1][1]}" if minors else None
    if version is not None and version not in KUBERNETES_VERSIONS:
        version = KUBERNETES_VERSIONS[-1] if minors[-1] > (1, 37) else KUBERNETES_VERSIONS[0]
    return NewCluster(version, _driver_release(dump))


def _driver_release(dump: ClusterDump) -> str | None:
    releases = set(DRIVER_VERSIONS)
    for slice_ in dump.slices:
        if slice_.driver != NVIDIA_DRIVER:
            continue
        for device in slice_.devices:
            kind = device.attribute(qualified(NVIDIA_DRIVER, TYPE_ATTRIBUTE))
            if not isinstance(kind, str):
                continue
            releases &= set(releases_publishing(NVIDIA_DRIVER, kind, frozenset(device.attributes)))
            if kind == GPU_DEVICE and any(
                health_taint(NVIDIA_DRIVER, t.key) for t in device.taints
            ):
                since = DRIVER_VERSIONS.index(HEALTH_TAINTS_SINCE)
                releases &= set(DRIVER_VERSIONS[since:])
    ordered = [v for v in DRIVER_VERSIONS if v in releases]
    if not ordered:
        return None
    released = [
        v for v in ordered if DRIVER_VERSIONS.index(v) <= DRIVER_VERSIONS.index(CURRENT_DRIVER)
    ]
    chosen = (released or ordered)[-1]
    return None if chosen == CURRENT_DRIVER else chosen
