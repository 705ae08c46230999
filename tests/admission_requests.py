"""Admission requests for tests: claims in every served shape, pods (created, or debugged with
an ephemeral container), Jobs and Kueue Workloads."""

from __future__ import annotations

import copy
from typing import Any

from tests.admission_harness import Request

CLAIM_RESOURCES = {
    "ResourceClaim": "resourceclaims",
    "ResourceClaimTemplate": "resourceclaimtemplates",
}


def exactly(device_class: str, name: str = "gpu", **fields: Any) -> dict[str, Any]:
    """A v1 (or v1beta2) request for devices of one class."""
    return {
        "name": name,
        "exactly": {"deviceClassName": device_class, "allocationMode": "ExactCount", "count": 1}
        | fields,
    }


def first_available(*classes: str, name: str = "gpu", **fields: Any) -> dict[str, Any]:
    """A v1 request that takes the first class with a free device."""
    return {
        "name": name,
        "firstAvailable": [
            {"name": f"option-{i}", "deviceClassName": c, "count": 1} | fields
            for i, c in enumerate(classes)
        ],
    }


def flat(device_class: str, name: str = "gpu", **fields: Any) -> dict[str, Any]:
    """A v1beta1 request: the device fields sit on the request itself."""
    return {"name": name, "deviceClassName": device_class, "count": 1} | fields


def claim(
    namespace: str,
    *requests: dict[str, Any],
    kind: str = "ResourceClaim",
    version: str = "v1",
    name: str = "my-claim",
) -> Request:
    """CREATE of a ResourceClaim or ResourceClaimTemplate with the given requests."""
    spec: dict[str, Any] = {"devices": {"requests": list(requests)}}
    if kind == "ResourceClaimTemplate":
        spec = {"spec": spec}
    obj = {
        "apiVersion": f"resource.k8s.io/{version}",
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }
    return Request(("resource.k8s.io", version, kind), CLAIM_RESOURCES[kind], namespace, obj)


def container(
    name: str = "main",
    requests: dict[str, str] | None = None,
    limits: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A container with the given resources and environment variables."""
    body: dict[str, Any] = {"name": name, "image": "registry.example.com/train:1"}
    resources = {
        field: value
        for field, value in (("requests", requests), ("limits", limits))
        if value is not None
    }
    if resources:
        body["resources"] = resources
    if env is not None:
        body["env"] = [{"name": key, "value": value} for key, value in env.items()]
    return body


def pod(
    namespace: str,
    containers: list[dict[str, Any]] | None = None,
    init_containers: list[dict[str, Any]] | None = None,
    priority: str | None = None,
    labels: dict[str, str] | None = None,
    name: str = "my-pod",
    runtime_class: str | None = None,
) -> Request:
    """CREATE of a pod, after the Priority admission plugin (it sets priorityClassName)."""
    spec: dict[str, Any] = {"containers": containers or [container()]}
    if init_containers:
        spec["initContainers"] = init_containers
    if priority:
        spec["priorityClassName"] = priority
    if runtime_class:
        spec["runtimeClassName"] = runtime_class
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        metadata["labels"] = labels
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}
    return Request(("", "v1", "Pod"), "pods", namespace, obj)


def debug(
    created: Request, *added: dict[str, Any], before: list[dict[str, Any]] | None = None
) -> Request:
    """UPDATE of pods/ephemeralcontainers (`kubectl debug`): the pod of `created` gets the
    ephemeral containers `added` after those it had `before`."""
    old = copy.deepcopy(created.object)
    if before:
        old["spec"]["ephemeralContainers"] = before
    new = copy.deepcopy(old)
    new["spec"]["ephemeralContainers"] = [*(before or []), *added]
    return Request(created.kind, "pods/ephemeralcontainers", created.namespace, new, "UPDATE", old)


def job(
    namespace: str,
    priority_label: str | None,
    operation: str = "CREATE",
    old_priority_label: str | None = None,
) -> Request:
    """A batch/v1 Job queued in Kueue, optionally with a workload priority label."""

    def body(label: str | None) -> dict[str, Any]:
        labels = {"kueue.x-k8s.io/queue-name": "default"}
        if label is not None:
            labels["kueue.x-k8s.io/priority-class"] = label
        return {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "my-job", "namespace": namespace, "labels": labels},
            "spec": {
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [container()],
                    }
                }
            },
        }

    old = body(old_priority_label) if operation == "UPDATE" else None
    return Request(("batch", "v1", "Job"), "jobs", namespace, body(priority_label), operation, old)


def workload(namespace: str, priority: str, version: str = "v1beta2") -> Request:
    """A Kueue Workload as Kueue creates it for a job (v1beta2 priorityClassRef)."""
    spec: dict[str, Any] = {"queueName": "default", "podSets": [{"name": "main", "count": 1}]}
    if version == "v1beta2":
        spec["priorityClassRef"] = {
            "group": "scheduling.k8s.io",
            "kind": "PriorityClass",
            "name": priority,
        }
    else:
        spec["priorityClassName"] = priority
        spec["priorityClassSource"] = "scheduling.k8s.io/priorityclass"
    obj = {
        "apiVersion": f"kueue.x-k8s.io/{version}",
        "kind": "Workload",
        "metadata": {"name": "job-my-job-1a2b3", "namespace": namespace},
        "spec": spec,
    }
    return Request(("kueue.x-k8s.io", version, "Workload"), "workloads", namespace, obj)
