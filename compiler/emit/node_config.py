"""Node configuration the GPU operator applies: the mig-parted config and the label per node.

These files live in out/clusters/<cluster>/node-config/, outside the kustomization: Argo CD does
not sync them. The ConfigMap goes to the GPU operator (`migManager.config.name`); the labels are
set per node (`nvidia.com/mig.config=<config>`), which makes the MIG manager repartition it.
"""

from __future__ import annotations

from collections import defaultdict

from compiler.emit.manifest import Manifest, provenance
from compiler.emit.render import render_template
from compiler.emit.view import ClusterView
from compiler.ir import WHOLE, MigConfig, layout_devices

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
        if device_filter and config.label != "all-disabled":
            entry["device-filter"] = device_filter
        entry["devices"] = "all" if len(config.gpus) == 1 else indices
        entry["mig-enabled"] = layout != WHOLE
        if layout != WHOLE:
            entry["mig-devices"] = layout_devices(layout)
        entries.append(entry)
    return entries


def emit(view: ClusterView) -> list[Manifest]:
    """The mig-parted ConfigMap and the node -> config label assignment of one cluster."""
    cluster, plan = view.cluster, view.plan
    if not any(p.pool.mig != "disabled" for p in cluster.pools):
        return []
    filters: dict[str, set[str]] = defaultdict(set)
    for pool in cluster.pools:
        for label in set(plan.labels(pool.pool.name)):
            filters[label].add(f"{pool.model.pci_device_id}10DE")
    configs = {
        label: mig_parted_entries(config, sorted(filters[label]))
        for label, config in sorted(plan.mig_configs.items())
    }
    nodes = {
        cluster.node_name(pool, index): label
        for pool in cluster.pools
        for index, label in enumerate(plan.labels(pool.pool.name))
        if pool.pool.mig != "disabled"
    }
    origin = cluster.cluster.source.origin
    directory = f"clusters/{cluster.name}/{NODE_CONFIG}"
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
            directory=directory,
            annotations=provenance(origin, "spec.nodePools"),
        ),
        Manifest(
            kind="NodeLabels",
            name="mig-config",
            template="mig-config-labels.yaml.j2",
            values={"nodes": nodes},
            directory=directory,
        ),
    ]
