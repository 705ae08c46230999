"""Argo CD ordering: every synced object carries its kind's wave, in the documented order;
custom resources skip the dry run; the AppProject admits every kind gpufleet emits."""

from __future__ import annotations

import yaml

from compiler.emit.manifest import SYNC_WAVE
from compiler.emit.waves import WAVES
from compiler.ir.sync_options import SYNC_OPTIONS
from compiler.pipeline import Compiled
from tests.test_versions import synced_objects


def test_every_synced_object_has_its_kinds_wave(compiled_example: Compiled) -> None:
    seen = set()
    for path, obj in synced_objects(compiled_example):
        annotations = obj["metadata"]["annotations"]
        assert annotations[SYNC_WAVE] == str(WAVES[obj["kind"]]), path
        seen.add(obj["kind"])
        custom = obj["apiVersion"].startswith("kueue.x-k8s.io/") or obj["kind"] == "DeviceTaintRule"
        assert (annotations.get(SYNC_OPTIONS) == "SkipDryRunOnMissingResource=true") == custom, path
    # the example opts no cluster into gang Workloads (tests/test_gang_workloads.py checks
    # their wave)
    assert seen == set(WAVES) - {"Workload"}


def test_waves_order_definitions_queues_quotas_then_consumables() -> None:
    order = [
        ("DeviceClass", "ClusterQueue"),
        ("PriorityClass", "ClusterQueue"),
        ("ResourceFlavor", "ClusterQueue"),
        ("Cohort", "ClusterQueue"),
        ("ClusterQueue", "ResourceQuota"),
        ("Namespace", "ResourceQuota"),
        ("ResourceQuota", "LocalQueue"),
        ("LimitRange", "ResourceClaimTemplate"),
        ("ResourceQuota", "ResourceClaimTemplate"),
    ]
    for first, then in order:
        assert WAVES[first] < WAVES[then], (first, then)


def test_app_project_admits_every_emitted_kind(compiled_example: Compiled) -> None:
    project = yaml.safe_load(compiled_example.tree["argocd/appproject_gpufleet.yaml"])["spec"]
    allowed = {
        (entry["group"], entry["kind"])
        for entry in project["clusterResourceWhitelist"] + project["namespaceResourceWhitelist"]
    }
    for path, obj in synced_objects(compiled_example):
        group = obj["apiVersion"].rpartition("/")[0]
        assert (group, obj["kind"]) in allowed, path
    application = yaml.safe_load(compiled_example.tree["argocd/applicationset_gpufleet.yaml"])
    assert (
        "ServerSideApply=true"
        in application["spec"]["template"]["spec"]["syncPolicy"]["syncOptions"]
    )
