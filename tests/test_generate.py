"""The benchmark fleets' generator: clusters of different sizes keep the fleet's total, and
what it makes compiles."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from benchmarks.generate import SIZES, Size, generate
from compiler.pipeline import compile_policies


def test_mixed_clusters_pair_up_around_the_mean_and_keep_the_total() -> None:
    mixed = SIZES["L-mixed"]
    sizes = [mixed.guarantees(c) for c in range(mixed.clusters)]
    assert sum(sizes) == mixed.clusters * mixed.guarantees_per_cluster
    assert (min(sizes), max(sizes)) == (32, 48)
    assert all(SIZES["L"].guarantees(c) == 40 for c in range(SIZES["L"].clusters))


def test_a_mixed_fleet_has_its_teams_where_the_sizes_say_and_compiles(tmp_path: Path) -> None:
    size = Size(6, 12, 4, 4, 0.3, 0.0, spread=2)
    generate(size, 1, tmp_path)
    teams = Counter(path.name.split("-team-")[0] for path in (tmp_path / "teams").glob("*.yaml"))
    assert [teams[f"cluster-{c:03d}"] for c in range(size.clusters)] == [4, 4, 5, 3, 6, 2]
    compiled = compile_policies(tmp_path)
    assert [len(cluster.teams) for cluster in compiled.fleet.clusters] == [4, 4, 5, 3, 6, 2]
