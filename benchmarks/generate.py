"""Generate synthetic, feasible GPU fleets for benchmarks: S, M, L and XL.

    python benchmarks/generate.py --size L --seed 1 /tmp/fleet-l

S is the example fleet in policies/. M: 10 clusters, 1,000 nodes, 8,000 GPUs, 200 guarantees,
10 tiers. L: 50 clusters, 12,500 nodes, 100,000 GPUs, 2,000 guarantees, 20 tiers, 30% of nodes
MIG-capable with MIG tiers in demand, device taints on 1% of GPUs. XL: L x 4. L-mixed: L with
clusters of different sizes, as fleets grow: 32 to 48 guarantees (and teams) a cluster, 2,000 in
all, on nodes of three host sizes (in L every cluster has 40 teams and the same nodes, so what is
worked out for one cluster's sizes serves them all).
Every fleet is feasible by construction: each tier's guarantees take at most half of what it
selects, on pools no other tier shares.
"""

from __future__ import annotations

import argparse
import random
import shutil
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HEADER = "apiVersion: gpufleet.dev/v1alpha1\n"

LADDER = (
    HEADER
    + """kind: PriorityLadder
metadata: {name: default}
spec:
  levels:
    - {name: critical, value: 1000000}
    - {name: standard, value: 1000}
    - {name: batch, value: 10, preemption: Never}
"""
)
"""The priority ladder of every generated fleet."""


@dataclass(frozen=True)
class Size:
    """The shape of a generated fleet."""

    clusters: int
    nodes_per_cluster: int
    guarantees_per_cluster: int
    tiers: int
    mig_share: float
    taint_share: float
    hosts: tuple[tuple[str, int], ...] = (("2Ti", 224),)
    """The host memory and CPUs of a GPU node; clusters take them in turn."""
    spread: int = 0
    """How many guarantees a cluster may have more or fewer than `guarantees_per_cluster`:
    clusters pair up, one with d more and the next with d fewer (d from 0 to `spread`)."""

    def guarantees(self, cluster: int) -> int:
        """The guarantees of cluster number `cluster` (an even number of clusters keeps the
        fleet's total at clusters x guarantees_per_cluster)."""
        offset = (cluster // 2) % (self.spread + 1)
        return self.guarantees_per_cluster + (offset if cluster % 2 == 0 else -offset)


SIZES = {
    "M": Size(10, 100, 20, 10, 0.3, 0.0),
    "L": Size(50, 250, 40, 20, 0.3, 0.01),
    "XL": Size(200, 250, 40, 20, 0.3, 0.01),
    "L-mixed": Size(
        50, 250, 40, 20, 0.3, 0.01, (("2Ti", 224), ("1536Gi", 192), ("3Ti", 256)), spread=8
    ),
}
WHOLE_MODELS = ("H200", "B200", "L40S")
MIG_PROFILES = ("3g.40gb", "2g.20gb", "1g.10gb")
GPU_OF_POOL = {"h100": "H100-80GB", **{model.lower(): model for model in WHOLE_MODELS}}


OPERATOR_ALLOWANCES = (
    "  podSecurity: privileged\n"
    "  allow: {devicePluginResources: true, gpuEnvironment: true, gpuRuntimeClasses: true}\n"
)
"""What a team that operates the GPUs themselves (burn-in, diagnostics) is granted."""


def _tiers(size: Size) -> list[tuple[str, str, str]]:
    """(name, pool it lives on, spec) for every tier."""
    tiers = []
    for index in range(size.tiers):
        if index % 4 == 3:
            profile = MIG_PROFILES[(index // 4) % len(MIG_PROFILES)]
            spec = (
                f"{{select: {{models: [H100-80GB]}}, partition: {profile}, hostMemoryPerGpu: 16Gi}}"
            )
            tiers.append((f"tier-{index:02d}", "h100", spec))
        else:
            model = WHOLE_MODELS[index % len(WHOLE_MODELS)]
            spec = (
                f"{{select: {{models: [{model}]}}, hostMemoryPerGpu: 128Gi, cpuPerGpu: 12"
                + (", gangMatchAttribute: resource.kubernetes.io/pcieRoot" if index % 2 else "")
                + "}"
            )
            tiers.append((f"tier-{index:02d}", model.lower(), spec))
    return tiers


def generate(size: Size, seed: int, root: Path) -> None:
    """Write a policy tree of `size` below `root`."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    (root / "clusters").mkdir(exist_ok=True)
    (root / "tiers").mkdir(exist_ok=True)
    (root / "teams").mkdir(exist_ok=True)
    (root / "grants").mkdir(exist_ok=True)
    (root / "taints").mkdir(exist_ok=True)
    (root / "ladder.yaml").write_text(LADDER)
    tiers = _tiers(size)
    for name, _, spec in tiers:
        (root / "tiers" / f"{name}.yaml").write_text(
            HEADER + f"kind: GpuTier\nmetadata: {{name: {name}}}\nspec: {spec}\n"
        )
    mig_nodes = int(size.nodes_per_cluster * size.mig_share)
    rest = size.nodes_per_cluster - mig_nodes
    pool_nodes = {
        "h100": mig_nodes,
        "h200": rest // 3,
        "b200": rest // 3,
        "l40s": rest - 2 * (rest // 3),
    }
    for c in range(size.clusters):
        cluster = f"cluster-{c:03d}"
        memory, cpus = size.hosts[c % len(size.hosts)]
        pools = "".join(
            f"    - {{name: {pool}, nodes: {nodes}, gpu: {GPU_OF_POOL[pool]}, gpusPerNode: 8, "
            f"hostMemory: {memory}, cpu: {cpus}{', mig: allowed' if pool == 'h100' else ''}"
            f"{', topology: {numaNode: 4, pcieRoot: 2}' if pool == 'l40s' else ''}}}\n"
            for pool, nodes in pool_nodes.items()
        )
        (root / "clusters" / f"{cluster}.yaml").write_text(
            HEADER + f"kind: Cluster\nmetadata: {{name: {cluster}}}\nspec:\n"
            f'  kubernetesVersion: "1.36"\n  nodePools:\n{pools}'
        )
        tainted_nodes = round(size.nodes_per_cluster * size.taint_share)
        for t in range(tainted_nodes):
            pool = rng.choice(["h200", "b200"])
            node = rng.randrange(pool_nodes[pool])
            (root / "taints" / f"{cluster}-{t}.yaml").write_text(
                HEADER + f"kind: DeviceTaint\nmetadata: {{name: {cluster}-ecc-{t}}}\n"
                f"spec: {{cluster: {cluster}, pool: {pool}, node: {node}, "
                "key: gpu.nvidia.com/ecc-errors, value: uncorrectable}\n"
            )
        _teams(size.guarantees(c), tiers, pool_nodes, cluster, root, rng)


def _teams(
    guarantees: int,
    tiers: list[tuple[str, str, str]],
    pool_nodes: dict[str, int],
    cluster: str,
    root: Path,
    rng: random.Random,
) -> None:
    users: dict[str, list[int]] = {}
    for index in range(guarantees):
        users.setdefault(tiers[index % len(tiers)][0], []).append(index)
    shared: dict[str, int] = {}
    for _, pool, _ in tiers:
        shared[pool] = shared.get(pool, 0) + 1
    for name, pool, spec in tiers:
        members = users.get(name, [])
        if not members:
            continue
        gpus = pool_nodes[pool] * 8 // shared[pool]
        devices = gpus * 2 if "partition" in spec else gpus
        for index in members:
            gang = 8 if "partition" not in spec and index % 3 == 0 else 1
            if "pcieRoot" in spec and gang > 1:
                gang = 2  # two GPUs share a PCIe root on these boards
            share = devices // (2 * len(members))  # half the tier's capacity, split
            count = max(gang, share - share % gang)
            team = f"{cluster}-team-{index:02d}"
            priority = rng.choice(["critical", "standard", "batch"])
            operator = index == 1  # one team per cluster runs the GPUs' own tools
            (root / "grants" / f"{team}.yaml").write_text(
                HEADER + f"kind: TeamGrant\nmetadata: {{name: {team}}}\nspec:\n"
                f"  group: {team}\n  namespaces: [{team}]\n  clusters: [{cluster}]\n"
                f"  quotas: [{{tier: {name}, guaranteed: {count}, limit: {count * 2}}}]\n"
                f"  priorities: [{priority}]\n" + (OPERATOR_ALLOWANCES if operator else "")
            )
            (root / "teams" / f"{team}.yaml").write_text(
                HEADER + f"kind: Team\nmetadata: {{name: {team}}}\nspec:\n"
                f"  quotas: [{{tier: {name}, gang: {gang}}}]\n"
            )


def main() -> None:
    """Command line: size, seed, target directory."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", choices=["S", *SIZES], required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("directory", type=Path)
    args = parser.parse_args()
    if args.directory.exists():
        shutil.rmtree(args.directory)
    if args.size == "S":
        shutil.copytree(REPO / "policies", args.directory)
    else:
        generate(SIZES[args.size], args.seed, args.directory)


if __name__ == "__main__":
    main()
