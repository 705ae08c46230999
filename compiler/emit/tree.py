"""Assemble the whole output tree: rendered manifests, kustomizations and plans."""

from __future__ import annotations

from compiler.emit.access import role_bindings
from compiler.emit.admission import admission_manifests
from compiler.emit.argocd import SyncedKind, argocd_manifests, synced_kind
from compiler.emit.claims import claim_templates
from compiler.emit.default_priority import default_priority
from compiler.emit.dra import device_classes
from compiler.emit.gpu_nodes import gpu_node_toleration
from compiler.emit.kueue import kueue_config, kueue_manifests
from compiler.emit.manifest import Manifest
from compiler.emit.namespaces import namespaces, resource_quotas
from compiler.emit.node_config import node_config
from compiler.emit.priority import priority_classes
from compiler.emit.qos import kubelet_dropins, namespace_qos
from compiler.emit.render import render
from compiler.emit.shared_claims import shared_claim_manifests
from compiler.emit.taints import device_taint_rules
from compiler.emit.workloads import gang_workloads
from compiler.ir import ClusterPlan, ResolvedCluster, ResolvedFleet
from compiler.parallel import map_in_order


def cluster_manifests(cluster: ResolvedCluster, fleet: ResolvedFleet) -> list[Manifest]:
    """Every object one cluster gets, in a total order (by path)."""
    claims = claim_templates(cluster)
    manifests = [
        *device_classes(cluster),
        *priority_classes(cluster.name, fleet.ladder),
        *default_priority(cluster, fleet.ladder),
        *gpu_node_toleration(cluster),
        *namespaces(cluster),
        *role_bindings(cluster, fleet.fleet),
        *resource_quotas(cluster),
        *claims,
        *shared_claim_manifests(cluster),
        *admission_manifests(cluster, fleet.fleet, fleet.ladder, claims),
        *namespace_qos(cluster),
        *device_taint_rules(cluster),
        *gang_workloads(cluster),
    ]
    return sorted(manifests, key=lambda m: m.path)


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


def cluster_files(
    cluster: ResolvedCluster, fleet: ResolvedFleet, plan: ClusterPlan
) -> ClusterFiles:
    """One cluster's rendered files (synced objects, kustomization, node and Kueue config) and
    the kinds Argo CD syncs for it."""
    files: dict[str, str] = {}
    manifests = cluster_manifests(cluster, fleet)
    queues = kueue_manifests(cluster, plan, fleet.ladder)
    manifests = sorted([*manifests, *queues], key=lambda m: m.path)
    unsynced = dict(kubelet_dropins(cluster))
    config = kueue_config(cluster)
    if config is not None:
        unsynced[config[0]] = config[1]
    unsynced.update((m.path, m) for m in node_config(cluster, plan))
    for path, manifest in unsynced.items():
        files[path] = render(manifest)
    for manifest in manifests:
        files[manifest.path] = render(manifest)
    synced = [synced_kind(m, files[m.path]) for m in manifests]
    files[f"clusters/{cluster.name}/kustomization.yaml"] = render(
        kustomization(cluster.name, manifests)
    )
    return files, synced


def build_tree(fleet: ResolvedFleet, plans: list[ClusterPlan]) -> dict[str, str]:
    """Every file gpufleet owns below out/, path -> text."""
    tree: dict[str, str] = {}
    plan_of = {plan.cluster: plan for plan in plans}
    synced: list[SyncedKind] = []
    per_cluster = map_in_order(
        lambda cluster: cluster_files(cluster, fleet, plan_of[cluster.name]), fleet.clusters
    )
    for files, kinds in per_cluster:
        tree.update(files)
        synced += kinds
    for manifest in argocd_manifests(fleet.fleet, [c.name for c in fleet.clusters], synced):
        tree[manifest.path] = render(manifest)
    for plan in plans:
        tree[f"plan/{plan.cluster}.json"] = plan.to_json()
    return dict(sorted(tree.items()))
