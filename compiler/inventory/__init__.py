"""Inventory: read what a cluster runs (a `kubectl get -o yaml` dump) into typed facts, and
turn them into the cluster's node pools (`gpufleet inventory import`)."""

from compiler.inventory.dump import (
    ClusterDump,
    CounterConsumption,
    CounterSet,
    Device,
    DeviceTaintRule,
    Node,
    ResourceSlice,
    Taint,
    Version,
)
from compiler.inventory.read import read_dump

__all__ = [
    "ClusterDump",
    "CounterConsumption",
    "CounterSet",
    "Device",
    "DeviceTaintRule",
    "Node",
    "ResourceSlice",
    "Taint",
    "Version",
    "read_dump",
]
