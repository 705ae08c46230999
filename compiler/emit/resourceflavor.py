"""Kueue ResourceFlavors: one per tier, naming the node taints of the tier's pools (Kueue adds
their tolerations to the pods it admits there), and one for host CPU and memory."""

from __future__ import annotations

from compiler.emit.kueue import kueue_annotations, kueue_api
from compiler.emit.manifest import Manifest
from compiler.emit.view import ClusterView
from compiler.ir import HOST_FLAVOR


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
            template="resourceflavor.yaml.j2",
            values={"api_version": api, "node_taints": [t.model_dump() for t in taints]},
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
