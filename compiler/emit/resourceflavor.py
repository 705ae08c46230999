"""Kueue ResourceFlavors: one per tier, naming the node taints of the tier's pools (Kueue adds
their tolerations to the pods it admits there), and one for host CPU and memory."""

from __future__ import annotations

from compiler.emit.kueue import kueue_annotations, kueue_api
from compiler.emit.manifest import Manifest
from compiler.emit.view import ClusterView
from compiler.emit.yaml_writer import spec_yaml
from compiler.ir import HOST_FLAVOR
from compiler.ir.policy import NodeTaint


def emit(view: ClusterView) -> list[Manifest]:
    """The cluster's ResourceFlavors (none when it runs no Kueue)."""
    cluster = view.cluster
    api = kueue_api(cluster)
    if api is None:
        return []
    return [
        Manifest(
            kind="ResourceFlavor",
            name=flavor,
            builder=spec_yaml,
            values={"api_version": api, "spec": _spec(taints)},
            cluster=cluster.name,
            annotations=kueue_annotations(source, clause, "ResourceFlavor"),
        )
        for flavor, source, clause, taints in [
            *(
                (t.name, t.tier.source.origin, "metadata.name", cluster.tier_node_taints(t.name))
                for t in cluster.tiers
            ),
            (HOST_FLAVOR, cluster.cluster.source.origin, "spec.kueue", []),
        ]
    ]


def _spec(taints: list[NodeTaint]) -> dict[str, object]:
    """The flavor's node taints and the tolerations Kueue adds for them (none without any)."""
    if not taints:
        return {}
    return {
        "nodeTaints": [t.fields() for t in taints],
        "tolerations": [
            {"key": t.key, "operator": "Equal", "value": t.value, "effect": t.effect}
            for t in taints
        ],
    }
