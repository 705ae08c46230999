"""Kueue ClusterQueues: one per team that holds quota in the cluster, admitting the team's
namespaces, with its guarantees as nominal quota and preemption read off the priority ladder."""

from __future__ import annotations

from compiler.emit.kueue import kueue_annotations, kueue_api, preemption, resource_groups
from compiler.emit.manifest import Manifest
from compiler.emit.view import ClusterView
from compiler.emit.yaml_writer import spec_yaml
from compiler.ir import TEAM_LABEL, team_cohort


def emit(view: ClusterView) -> list[Manifest]:
    """The cluster's ClusterQueues (none when it runs no Kueue)."""
    cluster = view.cluster
    api = kueue_api(cluster)
    if api is None:
        return []
    manifests = []
    for team in cluster.teams:
        groups = view.team_groups[team.name]
        if not groups:
            continue
        manifests.append(
            Manifest(
                kind="ClusterQueue",
                name=team.name,
                builder=spec_yaml,
                values={
                    "api_version": api,
                    "spec": {
                        "cohortName": team_cohort(cluster, team),
                        "namespaceSelector": {"matchLabels": {TEAM_LABEL: team.name}},
                        "preemption": preemption(team, view.fleet.ladder),
                        "resourceGroups": resource_groups(groups),
                    },
                },
                cluster=cluster.name,
                labels={TEAM_LABEL: team.name},
                annotations=kueue_annotations(team.grant.source.origin, "quotas", "ClusterQueue"),
            )
        )
    return manifests
