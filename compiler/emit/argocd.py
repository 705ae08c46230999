"""Argo CD wiring: an AppProject and an ApplicationSet over out/clusters/*."""

from __future__ import annotations

from compiler.emit.manifest import Manifest, provenance
from compiler.model.policy import Fleet

ARGOCD_DIR = "argocd"
CLUSTER_KINDS = (
    ("resource.k8s.io", "DeviceClass"),
    ("resource.k8s.io", "DeviceTaintRule"),
    ("scheduling.k8s.io", "PriorityClass"),
    ("", "Namespace"),
    ("kueue.x-k8s.io", "ResourceFlavor"),
    ("kueue.x-k8s.io", "Cohort"),
    ("kueue.x-k8s.io", "ClusterQueue"),
    ("kueue.x-k8s.io", "WorkloadPriorityClass"),
)
NAMESPACED_KINDS = (
    ("", "ResourceQuota"),
    ("", "LimitRange"),
    ("resource.k8s.io", "ResourceClaimTemplate"),
    ("kueue.x-k8s.io", "LocalQueue"),
)


def argocd_manifests(fleet: Fleet | None, clusters: list[str]) -> list[Manifest]:
    """The AppProject and ApplicationSet, when the policies say where the repository is."""
    if fleet is None:
        return []
    gitops = fleet.spec.gitops
    origin = fleet.source.origin
    common = {"namespace": gitops.argocd_namespace, "directory": ARGOCD_DIR}
    return [
        Manifest(
            kind="AppProject",
            name=gitops.project,
            template="appproject.yaml.j2",
            values={
                "repo_url": gitops.repo_url,
                "clusters": sorted(clusters),
                "cluster_kinds": [{"group": g, "kind": k} for g, k in CLUSTER_KINDS],
                "namespaced_kinds": [{"group": g, "kind": k} for g, k in NAMESPACED_KINDS],
            },
            annotations=provenance(origin, "gitops"),
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
            annotations=provenance(origin, "gitops"),
            **common,  # type: ignore[arg-type]
        ),
    ]
