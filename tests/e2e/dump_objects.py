"""Put a dump's objects into a control plane, and take them out: what a kubelet and a DRA
driver would have written there, for `kubectl get nodes,resourceslices,devicetaintrules` to
return (tests/e2e/test_inventory.py, test_drift.py)."""

from __future__ import annotations

from typing import Any

import kubelocal
import yaml

SERVER_SET = ("uid", "resourceVersion", "creationTimestamp", "ownerReferences", "generateName")


def as_created(item: dict[str, Any]) -> dict[str, Any]:
    """The object as a client creates it: no server-set metadata, no owner (whose uid would
    not exist, and the garbage collector would delete the slice)."""
    created = {k: v for k, v in item.items() if k != "status"}
    created["metadata"] = {k: v for k, v in item["metadata"].items() if k not in SERVER_SET}
    return created


def create(plane: kubelocal.ControlPlane, items: list[dict[str, Any]]) -> None:
    """Create the objects; a Node's status (capacity, conditions, nodeInfo) goes through its
    status subresource, as the kubelet writes it."""
    if not items:
        return
    created = {"apiVersion": "v1", "kind": "List", "items": [as_created(i) for i in items]}
    done = plane.kubectl("create", "-f", "-", input=yaml.safe_dump(created), check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    for item in items:
        if item["kind"] == "Node":
            body = yaml.safe_dump({"status": item["status"]})
            plane.kubectl(
                "patch", "node", item["metadata"]["name"], "--subresource=status",
                "--type=merge", "-p", body,
            )  # fmt: skip


def delete(plane: kubelocal.ControlPlane, items: list[dict[str, Any]]) -> None:
    """Delete the objects (by kind and name), waiting until they are gone."""
    for item in items:
        kind = {"ResourceSlice": "resourceslices", "DeviceTaintRule": "devicetaintrules"}.get(
            item["kind"], "nodes"
        )
        plane.kubectl("delete", kind, item["metadata"]["name"], "--wait=true")
