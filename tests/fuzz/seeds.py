"""The valid policy trees the fuzzer mutates: the example fleet and a small, fast one."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import EXAMPLE

PolicyTree = dict[str, bytes]
"""Relative path below policies/ -> file content."""

HEADER = "apiVersion: gpufleet.dev/v1alpha1\n"

SMALL: PolicyTree = {
    "cluster.yaml": (
        HEADER
        + """kind: Cluster
metadata: {name: c1, description: one cluster}
spec:
  kubernetesVersion: "1.36"
  nodePools:
    - {name: h100, nodes: 2, gpu: H100-80GB, gpusPerNode: 8, hostMemory: 2Ti, cpu: 224,
       mig: allowed}
    - {name: l40s, nodes: 2, gpu: L40S, gpusPerNode: 4, hostMemory: 512Gi, cpu: 64}
"""
    ).encode(),
    "fleet.yaml": (
        HEADER
        + """kind: Fleet
metadata: {name: fleet}
spec:
  gitops: {repoURL: "https://git.example.com/gpu.git", revision: main, path: out}
---
"""
        + HEADER
        + """kind: PriorityLadder
metadata: {name: ladder}
spec:
  levels:
    - {name: high, value: 1000, description: "serving"}
    - {name: low, value: 10, preemption: Never}
"""
    ).encode(),
    "tiers/whole.yaml": (
        HEADER
        + """kind: GpuTier
metadata: {name: whole}
spec:
  select: {models: [H100], minMemory: 79Gi}
  hostMemoryPerGpu: 100Gi
  cpuPerGpu: 8
"""
    ).encode(),
    "tiers/slice.yaml": (
        HEADER
        + """kind: GpuTier
metadata: {name: slice}
spec: {partition: 3g.40gb}
"""
    ).encode(),
    "tiers/ada.yaml": (
        HEADER
        + """kind: GpuTier
metadata: {name: ada}
spec:
  select:
    cel: |
      device.driver == "gpu.nvidia.com" &&
      device.attributes["gpu.nvidia.com"].architecture == "Ada Lovelace"
"""
    ).encode(),
    "grants/a.yaml": (
        HEADER
        + """kind: TeamGrant
metadata: {name: team-a}
spec:
  group: team-a
  namespaces: [team-a]
  quotas:
    - {tier: whole, guaranteed: 4, limit: 8}
    - {tier: ada, guaranteed: 2}
  priorities: [high]
"""
    ).encode(),
    "grants/b.yaml": (
        HEADER
        + """kind: TeamGrant
metadata: {name: team-b}
spec:
  namespaces: [team-b, team-b-dev]
  quotas:
    - {tier: slice, guaranteed: 4, limit: 6}
  priorities: [low]
  allow: {gpuEnvironment: true}
"""
    ).encode(),
    "teams/a.yaml": (
        HEADER
        + """kind: Team
metadata: {name: team-a}
spec:
  quotas:
    - {tier: whole, gang: 2}
"""
    ).encode(),
    "teams/b.yaml": (
        HEADER
        + """kind: Team
metadata: {name: team-b}
spec:
  quotas:
    - {tier: slice, namespace: team-b, limit: 5}
  defaultPriority: low
"""
    ).encode(),
}


def example_tree() -> PolicyTree:
    """The example fleet of the repository, as files."""
    return {
        p.relative_to(EXAMPLE).as_posix(): p.read_bytes()
        for p in sorted(EXAMPLE.rglob("*.yaml"))
        if p.is_file()
    }


def write_tree(root: Path, tree: PolicyTree) -> None:
    """Write a policy tree below `root`."""
    for relative, content in tree.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
