"""Gang Workloads (scheduling.k8s.io): one per team namespace and gang tier, where the
cluster opts in (`gangScheduling: Workload`) and serves the Workload API.

A gang guarantee of `g` devices becomes a Workload named like its claim template
(`<tier>-x<g>`) with one pod group, `gang`, of `g` pods that the scheduler places all or
nothing: `g` pods of one device each (template `<tier>`). One pod that takes all `g` devices
uses template `<tier>-x<g>` and needs no Workload, since one claim is allocated whole. Only
the fields every version serves without further gates are written (no priority, disruption
mode, topology or shared claims). Pods join through the version's link field (Target
`pod_group_link`), which the Workload names in an annotation.
"""

from __future__ import annotations

from compiler.emit.manifest import Manifest, provenance
from compiler.emit.view import ClusterView
from compiler.emit.waves import WAVES
from compiler.emit.yaml_writer import spec_yaml
from compiler.ir import TEAM_LABEL, TIER_LABEL
from compiler.versions import Feature

WAVE_WORKLOADS = WAVES["Workload"]
POD_GROUP = "gang"
POD_GROUP_LINK = "gpufleet.dev/pod-group-link"
"""Annotation: the Pod field that joins the gang in the cluster's version."""


def emit(view: ClusterView) -> list[Manifest]:
    """A Workload per guarantee with a gang, or none where the cluster does not opt in or
    does not serve the kind (resolve warns, GF603)."""
    cluster = view.cluster
    spec = cluster.cluster.spec
    if spec.gang_scheduling != "Workload" or not cluster.serves(Feature.GANG_WORKLOADS):
        return []
    row = cluster.target
    assert row.workload_shape is not None, "a version serving Workloads has their shape"
    manifests = []
    for guarantee in cluster.guarantees:
        if guarantee.gang <= 1:
            continue
        manifests.append(
            Manifest(
                kind="Workload",
                name=f"{guarantee.tier}-x{guarantee.gang}",
                builder=spec_yaml,
                values={
                    "api_version": row.workload_api,
                    "spec": {
                        row.workload_shape.groups: [
                            {
                                "name": POD_GROUP,
                                row.workload_shape.policy: {"gang": {"minCount": guarantee.gang}},
                            }
                        ]
                    },
                },
                cluster=cluster.name,
                namespace=guarantee.namespace,
                labels={
                    TEAM_LABEL: guarantee.team.name,
                    TIER_LABEL: guarantee.tier,
                },
                annotations={
                    **provenance(
                        guarantee.team.source.origin, f"quotas[{guarantee.tier}]", WAVE_WORKLOADS
                    ),
                    POD_GROUP_LINK: str(row.pod_group_link),
                },
            )
        )
    return manifests
