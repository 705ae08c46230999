"""The mig-parted ConfigMap: every MIG configuration the plan uses, for the GPU operator.

It lives in out/clusters/<cluster>/node-config/, outside the kustomization: Argo CD does not
sync it. It goes to the GPU operator (`migManager.config.name`); emit.nodelabels says which
configuration each node gets.
"""

from __future__ import annotations

from collections import defaultdict

from compiler.emit.manifest import Manifest, provenance
from compiler.emit.view import ClusterView
from compiler.emit.yaml_safe import Block, finalize
from compiler.emit.yaml_writer import config_map_yaml, document
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


def mig_parted_config(configs: dict[str, list[dict[str, object]]]) -> str:
    """mig-parted's configuration file holding `configs` (name -> entries), its lists in flow
    style as mig-parted's own examples write them; no final line break."""
    flowing = {name: [_flowing(entry) for entry in entries] for name, entries in configs.items()}
    return document({"version": "v1", "mig-configs": flowing}).rstrip("\n")


def _flowing(entry: dict[str, object]) -> dict[str, object]:
    """An entry with each list a flow sequence of scalars, quoted as any other scalar
    (`["0x233010DE"]`, `[0, 1]`)."""
    return {
        key: Block("[" + ", ".join(finalize(item) for item in value) + "]")
        if isinstance(value, list)
        else value
        for key, value in entry.items()
    }


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
            builder=config_map_yaml,
            values={"data": {"config.yaml": mig_parted_config(configs)}},
            namespace=GPU_OPERATOR_NAMESPACE,
            directory=f"clusters/{cluster.name}/{NODE_CONFIG}",
            annotations=provenance(cluster.cluster.source.origin, "spec.nodePools"),
        ),
    ]
