"""KubeletConfiguration drop-ins, one per node pool that needs one (memory QoS settings,
reservations, eviction thresholds, a node taint); written to node-config/, not synced."""

from __future__ import annotations

from typing import Any

from compiler.emit.manifest import Manifest, NamedFile
from compiler.emit.qos import cpu_quantity
from compiler.emit.view import ClusterView
from compiler.emit.yaml_safe import Block
from compiler.emit.yaml_writer import comment, document
from compiler.ir.policy import Kubelet, NodeTaint
from compiler.quantity import format_bytes
from compiler.versions import Feature, Target, target

KUBELET_API = "kubelet.config.k8s.io/v1beta1"
KUBELET_DROPIN = "50-gpufleet.conf"
DEFAULT_EVICTION_HARD = {
    "memory.available": "100Mi",
    "nodefs.available": "10%",
    "nodefs.inodesFree": "5%",
    "imagefs.available": "15%",
    "imagefs.inodesFree": "5%",
}
"""The kubelet's hard eviction signals on Linux when nothing sets `evictionHard`
(k8s.io/kubernetes pkg/kubelet/eviction/defaults_linux.go, the same in 1.32-1.37).

A drop-in that sets `evictionHard` lists them all, its own memory threshold in place of the
default. The kubelet merges drop-ins into its config as a JSON merge patch, so a drop-in's
map adds to the `evictionHard` of the --config file; but a kubelet started without a --config
file, or whose file lists fewer signals, would keep only the drop-in's, and every other
signal (disk and inode pressure) would be off. `mergeDefaultEvictionSettings: true` (1.33+)
does not help a drop-in: the kubelet applies it only while loading its --config file
(cmd/kubelet/app/server.go `loadConfigFile`), before any drop-in is merged."""


def _decimal(value: float) -> Block:
    """A float as a plain YAML number (shortest form that reads back the same)."""
    text = repr(float(value))
    float(text)  # a float repr is always a valid YAML float literal
    return Block(text)


def emit(view: ClusterView) -> list[Manifest]:
    """Per node pool, a KubeletConfiguration drop-in.

    Written to node-config/, not synced: it goes into the kubelet's `--config-dir`
    (drop-ins must end in .conf). A pool gets one when the cluster's kubelet settings differ
    from the defaults or the pool has a node taint (`registerWithTaints`).
    """
    cluster = view.cluster
    kubelet = cluster.cluster.spec.kubelet
    settings = _settings(kubelet, target(cluster.cluster.spec.kubernetes_version))
    threshold = kubelet.eviction_hard_memory
    eviction_hard = {}
    if threshold is not None:
        eviction_hard = {**DEFAULT_EVICTION_HARD, "memory.available": format_bytes(threshold)}
    return [
        NamedFile(
            kind="KubeletConfiguration",
            name=pool.pool.name,
            builder=build,
            values={
                "cluster": cluster.name,
                "pool": pool.pool.name,
                "settings": settings,
                "taint": pool.node_taint,
                "eviction_hard": eviction_hard,
            },
            directory=f"clusters/{cluster.name}/node-config/kubelet/{pool.pool.name}",
            file_name=KUBELET_DROPIN,
        )
        for pool in cluster.pools
        if settings or eviction_hard or pool.node_taint is not None
    ]


def _settings(kubelet: Kubelet, row: Target) -> dict[str, Any]:
    """The drop-in's fields for memory QoS and reservations, where they differ from the
    kubelet's defaults (eviction and the taint come with comments of their own)."""
    settings: dict[str, Any] = {}
    if kubelet.memory_qos:
        settings["featureGates"] = {"MemoryQoS": True}
        settings["memoryThrottlingFactor"] = _decimal(kubelet.memory_throttling_factor)
        if row.has(Feature.MEMORY_RESERVATION_POLICY):
            settings["memoryReservationPolicy"] = "TieredReservation"
    for field, reserved in (
        ("systemReserved", kubelet.system_reserved),
        ("kubeReserved", kubelet.kube_reserved),
    ):
        amounts = {}
        if reserved.cpu is not None:
            amounts["cpu"] = cpu_quantity(reserved.cpu)
        if reserved.memory is not None:
            amounts["memory"] = format_bytes(reserved.memory)
        if amounts:
            settings[field] = amounts
    return settings


TAINT_COMMENT = (
    "Only pods that claim this pool's GPUs tolerate the taint (gpufleet's admission policies), so",
    "the CPU and memory the solver counts for GPU pods stay theirs. "
    "The kubelet applies it when the",
    "node registers: taint nodes that are already registered once by hand (kubectl taint nodes).",
)
EVICTION_COMMENT = (
    "Every default signal, not only memory.available: without a --config file (or with one that",
    "lists fewer signals) the kubelet would otherwise turn the others off.",
)


def build(manifest: Manifest) -> str:
    """A pool's drop-in: what it is and where it goes, then the settings that differ from the
    kubelet's defaults, the taint and the eviction thresholds each under why they are there."""
    values = manifest.values
    parts = [
        comment(
            f"Kubelet drop-in for node pool {values['pool']} of cluster {values['cluster']}, "
            "generated by gpufleet.",
            "Not synced by Argo CD: install it as a file in the kubelet's --config-dir",
            f"(e.g. /etc/kubernetes/kubelet.conf.d/{KUBELET_DROPIN}) on the pool's nodes.",
        ),
        document({"apiVersion": KUBELET_API, "kind": manifest.kind, **values["settings"]}),
    ]
    taint: NodeTaint | None = values["taint"]
    if taint is not None:
        parts += [comment(*TAINT_COMMENT), document({"registerWithTaints": [taint.fields()]})]
    if values["eviction_hard"]:
        parts += [comment(*EVICTION_COMMENT), document({"evictionHard": values["eviction_hard"]})]
    return "".join(parts)
