"""The valid policy trees the fuzzer mutates: a small fast fleet, the example fleet,
a fleet of eight clusters (compiled on worker processes) and fleets generated from a seed
with the builders of tests/fleets.py."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

from tests import fleets
from tests.conftest import EXAMPLE

PolicyTree = dict[str, bytes]
"""Relative path below policies/ -> file content."""

HEADER = fleets.HEADER

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
    - {name: l40s, nodes: 2, gpu: L40S, gpusPerNode: 4, hostMemory: 512Gi, cpu: 64,
       nodeNames: "{cluster}-{pool}-{index}"}
  kueue: {enabled: true}
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


MIG: PolicyTree = {
    "cluster.yaml": (
        HEADER
        + """kind: Cluster
metadata: {name: m1}
spec:
  kubernetesVersion: "1.37"
  nodePools:
    - {name: h100, nodes: 1, gpu: H100-80GB, gpusPerNode: 4, hostMemory: 1Ti, cpu: 96,
       mig: mixed, topology: {numaNode: 2, pcieRoot: 1}}
---
"""
        + HEADER
        + """kind: DeviceTaint
metadata: {name: ecc}
spec: {cluster: m1, pool: h100, node: 0, device: 3, key: example.com/ecc,
       value: uncorrectable, effect: NoSchedule}
---
"""
        + HEADER
        + """kind: PriorityLadder
metadata: {name: ladder}
spec:
  levels:
    - {name: serving, value: 1000}
"""
    ).encode(),
    "tiers.yaml": (
        HEADER
        + "kind: GpuTier\nmetadata: {name: one}\nspec: {partition: 1g.10gb}\n---\n"
        + HEADER
        + "kind: GpuTier\nmetadata: {name: two}\nspec: {partition: 2g.20gb}\n---\n"
        + HEADER
        + "kind: GpuTier\nmetadata: {name: three}\n"
        + "spec: {partition: 3g.40gb, gangMatchAttribute: gpu.nvidia.com/parentUUID}\n"
    ).encode(),
    "grants/a.yaml": (
        HEADER
        + """kind: TeamGrant
metadata: {name: a}
spec:
  namespaces: [a]
  quotas:
    - {tier: one, guaranteed: 3, limit: 7}
    - {tier: three, guaranteed: 2}
  priorities: [serving]
  tolerations:
    - {key: example.com/ecc, operator: Equal, value: uncorrectable, effect: NoSchedule}
"""
    ).encode(),
    "grants/b.yaml": (
        HEADER
        + """kind: TeamGrant
metadata: {name: b}
spec:
  namespaces: [b]
  quotas:
    - {tier: two, guaranteed: 2, limit: 3}
"""
    ).encode(),
    "teams/a.yaml": HEADER.encode() + b"kind: Team\nmetadata: {name: a}\n",
    "teams/b.yaml": HEADER.encode()
    + b"kind: Team\nmetadata: {name: b}\nspec: {memoryQoS: guaranteed}\n",
}
"""A tiny fleet of one node whose GPUs each take their own MIG layout (`mig: mixed`), three
MIG tiers, a tainted GPU and a team tolerating it by value."""


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


def read_tree(root: Path) -> PolicyTree:
    """Every file below `root`, as a policy tree."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


POOLS = {
    "h100": "{{name: {name}, nodes: {nodes}, gpu: H100-80GB, gpusPerNode: 8, hostMemory: 2Ti,"
    " cpu: 224, mig: {mig}}}",
    "h200": "{{name: {name}, nodes: {nodes}, gpu: H200, gpusPerNode: 8, hostMemory: 2Ti,"
    " cpu: 224, topology: {{numaNode: 4, pcieRoot: 2}}}}",
    "l40s": "{{name: {name}, nodes: {nodes}, gpu: L40S, gpusPerNode: 4, hostMemory: 512Gi,"
    " cpu: 64}}",
}
"""Node pool shapes of generated fleets, by kind."""

TIERS = {
    "hopper": ("{select: {models: [H100, H200]}, hostMemoryPerGpu: 100Gi, cpuPerGpu: 8}", "h1"),
    "big": (
        "{select: {models: [H200]}, gangMatchAttribute: resource.kubernetes.io/pcieRoot}",
        "h2",
    ),
    "ada": (
        '{select: {cel: \'device.attributes["gpu.nvidia.com"].architecture == "Ada Lovelace"\'}}',
        "l4",
    ),
    "slice": ("{partition: 3g.40gb}", "mig"),
    "tiny": ("{partition: 1g.10gb, hostMemoryPerGpu: 20Gi}", "mig"),
}
"""Tier specs of generated fleets, with what they need: hopper (h1: H100 or H200),
h2 (H200), l4 (L40S) or mig (an H100 pool with MIG allowed)."""

SERVES = {"h100": {"h1"}, "h200": {"h1", "h2"}, "l40s": {"l4"}}
"""What a pool of each kind serves (an H100 pool with MIG allowed serves `mig` too)."""


def generated_fleet(seed: str, clusters: int = 0) -> dict[str, str]:
    """A small fleet drawn from `seed` with tests/fleets.py (teams written in the layout
    before grants; `fleets.write_tree` migrates them): one or two clusters (or `clusters`) of
    the same pool kinds (H100 with MIG allowed or not, H200, L40S) in various sizes and
    Kubernetes versions, the tiers those pools serve, a device taint now and then, and teams
    guaranteed little enough to fit in every cluster."""
    rng = random.Random(seed)
    count = clusters or rng.choice([1, 1, 2])
    kinds = rng.sample(sorted(POOLS), rng.randint(1, 3))
    mig = rng.choice(["allowed", "disabled"])
    served = set().union(*(SERVES[kind] for kind in kinds))
    served |= {"mig"} if "h100" in kinds and mig == "allowed" else set()
    files: dict[str, str] = {"ladder.yaml": fleets.LADDER}
    for index in range(count):
        pools = "".join(
            "\n    - " + POOLS[kind].format(name=kind, nodes=rng.randint(2, 4), mig=mig)
            for kind in kinds
        )
        version = rng.choice(["1.34", "1.35", "1.36", "1.37"])
        files[f"clusters/c{index}.yaml"] = fleets.cluster(f"c{index}", pools + "\n", version)
    possible = sorted(name for name, (_, needs) in TIERS.items() if needs in served)
    tiers = rng.sample(possible, rng.randint(1, min(3, len(possible))))
    files.update({f"tiers/{t}.yaml": fleets.tier(t, TIERS[t][0]) for t in tiers})
    tainted = rng.random() < 0.3
    if tainted:
        files["taint.yaml"] = fleets.HEADER + (
            "kind: DeviceTaint\nmetadata: {name: ecc}\n"
            f"spec: {{cluster: c0, pool: {kinds[0]}, node: 0, device: 1,"
            " key: example.com/ecc, effect: NoSchedule}\n"
        )
    for index in range(rng.randint(1, 4)):
        tier = rng.choice(tiers)
        gang = rng.choice([1, 1, 2])
        quota = f"[{{tier: {tier}, guaranteed: {gang * rng.randint(1, 2)}, gang: {gang}}}]"
        extra = "  priorities: [high, low]\n" if rng.random() < 0.5 else ""
        if tainted and rng.random() < 0.5:
            extra += "  tolerations: [{key: example.com/ecc}]\n"
        files[f"teams/t{index}.yaml"] = fleets.team(f"t{index}", quota, extra)
    return files


def generated_tree(seed: str, clusters: int = 0) -> PolicyTree:
    """`generated_fleet` written and migrated into grants, as files."""
    with tempfile.TemporaryDirectory() as directory:
        root = fleets.write_tree(Path(directory), generated_fleet(seed, clusters))
        return read_tree(root)
