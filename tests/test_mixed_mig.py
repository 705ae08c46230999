"""`mig: mixed` pools whose nodes could take thousands of per-GPU arrangements: only undominated
device counts are kept where no gang must stay within part of a node, so a tiny fleet with an
8-GPU mixed pool and three MIG tiers solves instead of failing with GF402 (issue 17)."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from compiler.catalog import load_catalog
from compiler.ir import ResolvedPool
from compiler.load import load_policies
from compiler.model import build_policies
from compiler.resolve import resolve
from compiler.solve import solve_fleet
from compiler.solve.node_options import NodeConfig, gpu_options, node_configs
from tests import fleets
from tests.conftest import PolicyWriter
from tests.oracle_policy import read_cluster
from tests.plan_checker import check_plan

TIERS = {"s1": "1g.10gb", "s2": "2g.20gb", "s3": "3g.40gb"}


def fleet(width: int, quotas: dict[str, int]) -> dict[str, str]:
    pools = (
        f"\n    - {{name: h100, nodes: 2, gpu: H100-80GB, gpusPerNode: {width}, hostMemory: 2Ti,"
        " cpu: 224, mig: mixed}\n"
    )
    files = {"cluster.yaml": fleets.cluster(pools=pools)}
    files |= {f"{t}.yaml": fleets.tier(t, f"{{partition: {p}}}") for t, p in TIERS.items()}
    files |= {
        f"team-{t}.yaml": fleets.team(f"team-{t}", f"[{{tier: {t}, guaranteed: {n}}}]")
        for t, n in quotas.items()
    }
    return files


def test_an_eight_gpu_mixed_pool_with_three_mig_tiers_solves(write_policies: PolicyWriter) -> None:
    """20 x 1g + 10 x 2g + 6 x 3g on two 8-GPU nodes: every multiset of per-GPU layouts would
    be C(16, 8) = 12,870 configurations per node, over the bound (GF402 before)."""
    root = write_policies(fleet(8, {"s1": 20, "s2": 10, "s3": 6}))
    policies = build_policies(load_policies(root))
    resolved = resolve(policies, load_catalog())
    (plan,) = solve_fleet(resolved)
    assert check_plan(read_cluster(policies, "c1"), plan.to_json()) == []
    served = {str(k): sum(v.values()) for k, v in plan.assignments.items()}
    assert served == {"team-s1/team-s1/s1": 20, "team-s2/team-s2/s2": 10, "team-s3/team-s3/s3": 6}


def offered(config: NodeConfig, taints: tuple[frozenset[str], ...], usable: set[frozenset[str]]):  # type: ignore[no-untyped-def]
    """Devices per (GPU taints, kind) a node offers, counting only usable GPUs."""
    found: Counter[tuple[frozenset[str], str]] = Counter()
    for gpu_taints, option in zip(taints, config.options, strict=True):
        if gpu_taints in usable:
            devices = {"gpu": 1} if option.is_whole else dict(option.counts)
            found.update({(gpu_taints, k): n for k, n in devices.items()})
    return frozenset(found.items())


def undominated(vectors: set[frozenset]) -> set[frozenset]:  # type: ignore[type-arg]
    def covers(big: frozenset, small: frozenset) -> bool:  # type: ignore[type-arg]
        have = dict(big)
        return all(have.get(k, 0) >= n for k, n in small)

    return {v for v in vectors if not any(o != v and covers(o, v) for o in vectors)}


@pytest.mark.parametrize("tainted", [None, 0, 2])
@pytest.mark.parametrize("tolerated", [False, True])
def test_the_kept_configurations_offer_exactly_the_undominated_device_counts(
    write_policies: PolicyWriter, tainted: int | None, tolerated: bool
) -> None:
    """By brute force over every per-GPU assignment of a 4-GPU node: the configurations kept
    offer each undominated device count once, and nothing else."""
    root = write_policies(fleet(4, {"s1": 1}))
    (cluster,) = resolve(build_policies(load_policies(root)), load_catalog()).clusters
    pool: ResolvedPool = cluster.pools[0]
    options = gpu_options(pool, set(TIERS.values()))
    taints = tuple(frozenset({"ecc"}) if i == tainted else frozenset() for i in range(4))
    usable = {frozenset(), *([frozenset({"ecc"})] if tolerated else [])}
    kept = node_configs(pool, options, taints, (), frozenset(usable))
    every = {offered(NodeConfig(c), taints, usable) for c in itertools.product(options, repeat=4)}
    found = [offered(c, taints, usable) for c in kept]
    assert len(found) == len(set(found))
    assert set(found) == undominated(every)
