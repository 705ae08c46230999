"""Kueue Cohorts: the cluster's root cohort, holding the solved headroom every team may borrow,
and a child cohort per team cohort the policy names."""

from __future__ import annotations

from compiler.emit.kueue import kueue_annotations, kueue_api, resource_groups
from compiler.emit.kueue_quota import cohort_groups
from compiler.emit.manifest import Manifest
from compiler.emit.view import ClusterView
from compiler.emit.yaml_writer import present, spec_yaml
from compiler.ir import root_cohort


def emit(view: ClusterView) -> list[Manifest]:
    """The cluster's Cohorts (none when it runs no Kueue)."""
    cluster = view.cluster
    api = kueue_api(cluster)
    if api is None:
        return []
    root = root_cohort(cluster)
    manifests = [
        Manifest(
            kind="Cohort",
            name=root,
            builder=spec_yaml,
            values={
                "api_version": api,
                "spec": present(resourceGroups=resource_groups(cohort_groups(cluster, view.plan))),
            },
            cluster=cluster.name,
            annotations=kueue_annotations(cluster.cluster.source.origin, "spec.kueue", "Cohort"),
        )
    ]
    children = sorted({t.spec.cohort for t in cluster.teams if t.spec.cohort} - {root})
    for child in children:
        first = next(t for t in cluster.teams if t.spec.cohort == child)
        manifests.append(
            Manifest(
                kind="Cohort",
                name=child,
                builder=spec_yaml,
                values={"api_version": api, "spec": present(parentName=root)},
                cluster=cluster.name,
                annotations=kueue_annotations(first.grant.source.origin, "cohort", "Cohort"),
            )
        )
    return manifests
