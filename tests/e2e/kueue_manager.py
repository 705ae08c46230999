"""Kueue in the real-cluster suite: the real manager of an exact release running against a
kube-local control plane (scripts/kubelocal/kueue.py), and reading what it decided about a Job.

    with kueue_manager.running(plane, {"manageJobsWithoutQueueName": True, ...}) as manager:
        plane.kubectl("create", "-f", "-", input=job_yaml)
        workload = kueue_manager.wait_for_workload(plane, "team-a", "train", kueue_manager.decided)
        assert kueue_manager.admitted(workload)
        assert kueue_manager.usage(workload)["gpufleet.dev/training"] == "4"
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import kubelocal
import yaml
from kubelocal.kueue_config import API_GROUP

Workload = dict[str, Any]
WAIT_SECONDS = 30.0


@contextmanager
def running(
    plane: kubelocal.ControlPlane,
    configuration: Path | Mapping[str, Any],
    version: str = "0.19",
) -> Iterator[kubelocal.kueue.KueueManager]:
    """Kueue ``version`` for a ``with`` block, reading ``configuration``: a Configuration file, or
    the fields of a v1beta2 Configuration (apiVersion and kind are added)."""
    if not isinstance(configuration, Path):
        path = plane.state_dir / "kueue-configuration.yaml"
        body = {"apiVersion": f"{API_GROUP}/v1beta2", "kind": "Configuration", **configuration}
        path.write_text(yaml.safe_dump(body, sort_keys=False))
        configuration = path
    with kubelocal.kueue.running(plane, version, configuration) as manager:
        yield manager


def workload_of(plane: kubelocal.ControlPlane, namespace: str, job: str) -> Workload | None:
    """The Workload Kueue made for batch/v1 Job ``job``, or None (yet)."""
    done = plane.kubectl("get", "workloads.kueue.x-k8s.io", "-n", namespace, "-o", "json")
    for workload in json.loads(done.stdout)["items"]:
        owners = workload["metadata"].get("ownerReferences", [])
        if any(o["kind"] == "Job" and o["name"] == job for o in owners):
            return dict(workload)
    return None


def wait_for_workload(
    plane: kubelocal.ControlPlane,
    namespace: str,
    job: str,
    until: Callable[[Workload], bool],
    timeout: float = WAIT_SECONDS,
) -> Workload:
    """The Job's Workload once ``until`` holds for it; AssertionError with its last state after
    ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    workload = None
    while time.monotonic() < deadline:
        workload = workload_of(plane, namespace, job)
        if workload is not None and until(workload):
            return workload
        time.sleep(0.5)
    raise AssertionError(f"Workload of Job {namespace}/{job} after {timeout:.0f}s: {workload}")


def condition(workload: Workload, kind: str) -> dict[str, Any] | None:
    """The Workload's status condition of type ``kind`` (QuotaReserved, Admitted, ...), or None."""
    for found in workload.get("status", {}).get("conditions", []):
        if found["type"] == kind:
            return dict(found)
    return None


def admitted(workload: Workload) -> bool:
    """Whether Kueue admitted the Workload."""
    found = condition(workload, "Admitted")
    return found is not None and found["status"] == "True"


def decided(workload: Workload) -> bool:
    """Whether Kueue has tried to admit the Workload: admitted, or pending with a reason."""
    found = condition(workload, "QuotaReserved")
    return admitted(workload) or (found is not None and found["status"] == "False")


def usage(workload: Workload, pod_set: str | None = None) -> dict[str, str]:
    """What the admission charges for ``pod_set`` (default: the only one), resource -> quantity
    as Kueue writes it (``{"gpufleet.dev/training": "4", "cpu": "100m", ...}``); empty if not
    admitted."""
    admission = workload.get("status", {}).get("admission") or {}
    assignments = admission.get("podSetAssignments", [])
    if pod_set is None:
        assert len(assignments) <= 1, f"name the pod set: {[a['name'] for a in assignments]}"
        return dict(assignments[0].get("resourceUsage", {})) if assignments else {}
    for assignment in assignments:
        if assignment["name"] == pod_set:
            return dict(assignment.get("resourceUsage", {}))
    return {}
