"""Benchmark the solver alone on a generated fleet (not a test: run it on demand).

    python benchmarks/solve.py --size L          # generates the fleet into a temp dir
    python benchmarks/solve.py --policies DIR

Prints the solve time over all clusters (median of --repeat runs), the slowest cluster, the
model sizes, and the process's peak RSS.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.generate import SIZES, generate
from compiler.catalog import load_catalog
from compiler.load import load_policies
from compiler.model import build_policies
from compiler.resolve import resolve
from compiler.solve.model import build_model
from compiler.solve.solver import solve_cluster


def main() -> None:
    """Generate or read a fleet, resolve it once, then time the solver."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="L")
    parser.add_argument("--policies", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        root = args.policies
        if root is None:
            root = Path(directory) / "policies"
            generate(SIZES[args.size], 1, root)
        fleet = resolve(build_policies(load_policies(root)), load_catalog())
    load_catalog()
    totals, slowest = [], (0.0, "")
    for _ in range(args.repeat):
        start = time.perf_counter()
        for cluster in fleet.clusters:
            began = time.perf_counter()
            solve_cluster(cluster, 60.0)
            slowest = max(slowest, (time.perf_counter() - began, cluster.name))
        totals.append(time.perf_counter() - start)
    sample = build_model(fleet.clusters[0])
    nodes = sum(p.pool.nodes for c in fleet.clusters for p in c.pools)
    gpus = sum(p.gpus for c in fleet.clusters for p in c.pools)
    guarantees = sum(len(c.guarantees) for c in fleet.clusters)
    print(
        f"fleet: {len(fleet.clusters)} clusters, {nodes} nodes, {gpus} GPUs, "
        f"{guarantees} guarantees"
    )
    print(
        f"solve, all clusters: median {statistics.median(totals):.2f} s "
        f"(runs: {', '.join(f'{t:.2f}' for t in totals)})"
    )
    print(f"slowest cluster: {slowest[1]} {slowest[0] * 1000:.0f} ms")
    print(
        f"model of {fleet.clusters[0].name}: {len(sample.model.proto.variables)} variables, "
        f"{len(sample.model.proto.constraints)} constraints"
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of this process: {peak:.0f} MiB")


if __name__ == "__main__":
    main()
