"""Argo CD wiring: an AppProject and an ApplicationSet over out/clusters/*, and a Config
Management Plugin for teams that prefer Argo CD to run gpufleet itself."""

from __future__ import annotations

import shlex
from collections.abc import Iterable

from compiler.emit.manifest import Manifest, NamedFile, provenance
from compiler.emit.render import render
from compiler.emit.yaml_writer import config_map_yaml
from compiler.ir.policy import Fleet

ARGOCD_DIR = "argocd"
CMP_DIR = f"{ARGOCD_DIR}/cmp"
PLUGIN_NAME = "gpufleet"
CLUSTER_ENV = "GPUFLEET_CLUSTER"
"""Set in the Application's `spec.source.plugin.env`; Argo CD prefixes it with ARGOCD_ENV_."""


def generate_command(out_path: str) -> str:
    """The plugin's generate command (for `sh -c`): render the committed plan in out/.

    Argo CD runs it in the Application's source directory (the policies); out/ is found at
    `out_path` (the fleet's gitops.path) from the repository's root, which is that directory
    without ARGOCD_APP_SOURCE_PATH. render refuses a missing or stale plan (GF501).
    """
    return (
        f'exec gpufleet render --policies . --source-path "$ARGOCD_APP_SOURCE_PATH" '
        f'--out {shlex.quote(out_path)} --format text --cluster "$ARGOCD_ENV_{CLUSTER_ENV}"'
    )


SyncedKind = tuple[str, str, str, str | None]
"""(cluster, apiVersion, kind, namespace or None) of one object Argo CD syncs."""


def synced_kind(manifest: Manifest, text: str) -> SyncedKind:
    """What the AppProject must allow for one rendered manifest (its first line is apiVersion)."""
    first = text.split("\n", 1)[0]
    if not first.startswith("apiVersion: ") or manifest.cluster is None:
        raise ValueError(f"{manifest.path}: a synced manifest has a cluster and an apiVersion")
    return (
        manifest.cluster,
        first.removeprefix("apiVersion: ").strip('"'),
        manifest.kind,
        manifest.namespace,
    )


def resource_kinds(
    synced: Iterable[SyncedKind],
) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """The (group, kind) pairs of the objects Argo CD syncs: cluster-scoped, then namespaced.

    Taken from the emitted objects themselves, so the AppProject allows exactly the kinds
    gpufleet creates, whichever emitters produced them.
    """
    scoped: dict[bool, set[tuple[str, str]]] = {False: set(), True: set()}
    for _, api_version, kind, namespace in synced:
        scoped[namespace is not None].add((api_version.rpartition("/")[0], kind))
    return tuple(  # type: ignore[return-value]
        [{"group": g, "kind": k} for g, k in sorted(scoped[namespaced])]
        for namespaced in (False, True)
    )


def destinations(clusters: Iterable[str], synced: Iterable[SyncedKind]) -> dict[str, list[str]]:
    """Per cluster, the namespaces gpufleet syncs objects into: the AppProject allows exactly
    those (and the cluster's Application itself, whose destination names no namespace), so
    no Application of the project can write, or prune, anywhere else."""
    found: dict[str, set[str]] = {cluster: set() for cluster in clusters}
    for cluster, _, _, namespace in synced:
        if namespace is not None:
            found[cluster].add(namespace)
    return {cluster: sorted(found[cluster]) for cluster in sorted(found)}


def argocd_manifests(
    fleet: Fleet | None, clusters: list[str], synced: Iterable[SyncedKind] = ()
) -> list[Manifest]:
    """AppProject, ApplicationSet and the CMP, when the policies say where the repository is."""
    if fleet is None:
        return []
    gitops = fleet.spec.gitops
    annotations = provenance(fleet.source.origin, "gitops")
    synced = list(synced)
    cluster_kinds, namespaced_kinds = resource_kinds(synced)
    common = {"namespace": gitops.argocd_namespace, "directory": ARGOCD_DIR}
    plugin = NamedFile(
        kind="ConfigManagementPlugin",
        name=PLUGIN_NAME,
        template="configmanagementplugin.yaml.j2",
        values={"generate": generate_command(gitops.path)},
        directory=CMP_DIR,
        annotations=annotations,
        file_name="plugin.yaml",
    )
    return [
        Manifest(
            kind="AppProject",
            name=gitops.project,
            template="appproject.yaml.j2",
            values={
                "repo_url": gitops.repo_url,
                "destinations": destinations(clusters, synced),
                "cluster_kinds": cluster_kinds,
                "namespaced_kinds": namespaced_kinds,
            },
            annotations=annotations,
            **common,  # type: ignore[arg-type]
        ),
        Manifest(
            kind="ApplicationSet",
            name="gpufleet",
            template="applicationset.yaml.j2",
            values={
                "repo_url": gitops.repo_url,
                "revision": gitops.revision,
                "clusters_path": f"{gitops.path}/clusters/*",
                "project": gitops.project,
                "app_name": "gpufleet-{{.path.basename}}",
                "app_path": "{{.path.path}}",
                "app_destination": "{{.path.basename}}",
            },
            annotations=annotations,
            **common,  # type: ignore[arg-type]
        ),
        plugin,
        Manifest(
            kind="ConfigMap",
            name=f"{PLUGIN_NAME}-cmp-plugin",
            builder=config_map_yaml,
            values={"data": {"plugin.yaml": render(plugin).rstrip("\n")}},
            namespace=gitops.argocd_namespace,
            directory=CMP_DIR,
            annotations=annotations,
        ),
    ]
