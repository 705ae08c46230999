"""The mig-parted ConfigMap: every MIG configuration the plan uses, for the GPU operator.

It lives in out/clusters/<cluster>/node-config/, outside the kustomization: Argo CD does not
sync it. It goes to the GPU operator (`migManager.config.name`); emit.nodelabels says which
configuration each node gets.
"""

from __future__ import annotations

from collections import defaultdict

from compiler.emit.manifest import Manifest, provenance
from compiler.emit.render import render_template
from compiler.emit.view import ClusterView
from compiler.ir import ALL_DISABLED, WHOLE, MigConfig, ResolvedCluster, layout_devices

MIG_PARTED_CONFIGMAP = "gpufleet-mig-parted-config"
GPU_OPERATOR_NAMESPACE = "gpu-operator"
NODE_CONFIG = "node-config"


def mig_parted_entries(config: MigConfig, device_filter: list[str]) -> list[dict[str, object]]:
    """The mig-parted entries of one configuration (one per distinct GPU layout)."""
    by_layout: dict[str, list[int]] = defaultdict(list)
    for index, layout in enumerate(config.gpus):
        by_layout[layout].append(index)
    entries: list[dict[str, object]] = []
    for layout, indices in sorted(by_layout.items(), key=lambda item: item[1][0]):
        entry: dict[str, object] = {}
        if device_filter and config.label != ALL_DISABLED:
            entry["device-filter"] = device_filter
        entry["devices"] = "all" if len(config.gpus) == 1 else indices
        entry["mig-enabled"] = layout != WHOLE
        if layout != WHOLE:
            entry["mig-devices"] = layout_devices(layout)
        entries.append(entry)
    return entries


def has_mig(cluster: ResolvedCluster) -> bool:
    """Whether any pool of the cluster may be partitioned (else no node config is written)."""
    return any(p.pool.mig != "disabled" for p in cluster.pools)


def emit(view: ClusterView) -> list[Manifest]:
    """The cluster's mig-parted ConfigMap, if any pool may use MIG."""
    cluster, plan = view.cluster, view.plan
    if not has_mig(cluster):
        return []
    filters: dict[str, set[str]] = defaultdict(set)
    for pool in cluster.pools:
        for label in set(plan.labels(pool.pool.name)):
            filters[label].add(f"{pool.model.pci_device_id}10DE")
    configs = {
        label: mig_parted_entries(config, sorted(filters[label]))
        for label, config in sorted(plan.mig_configs.items())
    }
    return [
        Manifest(
            kind="ConfigMap",
            name=MIG_PARTED_CONFIGMAP,
            template="mig-parted-configmap.yaml.j2",
            values={
                "config_text": render_template("mig-parted-config.yaml.j2", configs=configs).rstrip(
                    "\n"
                )
            },
            namespace=GPU_OPERATOR_NAMESPACE,
            directory=f"clusters/{cluster.name}/{NODE_CONFIG}",
            annotations=provenance(cluster.cluster.source.origin, "spec.nodePools"),
        ),
    ]
