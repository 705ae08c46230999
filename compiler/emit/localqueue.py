"""Kueue LocalQueues: a `default` queue in every namespace of a team that has a ClusterQueue
(it takes the jobs that name no queue)."""

from __future__ import annotations

from compiler.emit.kueue import kueue_annotations, kueue_api
from compiler.emit.manifest import Manifest
from compiler.emit.view import ClusterView
from compiler.emit.yaml_writer import object_yaml
from compiler.ir import TEAM_LABEL

DEFAULT_QUEUE = "default"


def emit(view: ClusterView) -> list[Manifest]:
    """The cluster's LocalQueues (none when it runs no Kueue)."""
    cluster = view.cluster
    api = kueue_api(cluster)
    if api is None:
        return []
    return [
        Manifest(
            kind="LocalQueue",
            name=DEFAULT_QUEUE,
            builder=build,
            values={"api_version": api, "cluster_queue": team.name},
            cluster=cluster.name,
            namespace=namespace,
            labels={TEAM_LABEL: team.name},
            annotations=kueue_annotations(
                team.grant.source.origin, f"namespaces[{namespace}]", "LocalQueue"
            ),
        )
        for team in cluster.teams
        if view.team_groups[team.name]
        for namespace in team.spec.namespaces
    ]


def build(manifest: Manifest) -> str:
    """A LocalQueue's YAML: the team's ClusterQueue."""
    values = manifest.values
    return object_yaml(
        values["api_version"], manifest, {"spec": {"clusterQueue": values["cluster_queue"]}}
    )
