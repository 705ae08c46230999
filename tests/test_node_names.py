"""Real inventories: node pools that list their nodes' names, taints that name a node, and
node names as long as Kubernetes allows (253 characters) wherever they reach the output
(issue 18, deliverable 6)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import yaml

from compiler.diagnostics import CompileError, Diagnostic
from compiler.ir import ClusterPlan
from compiler.load import load_policies
from compiler.model import build_policies
from compiler.model.cluster import NodePool
from compiler.names import DNS_SUBDOMAIN_MAX, FILE_NAME_MAX, is_dns_subdomain, shortened
from compiler.pipeline import Compiled, compile_policies
from compiler.report.mig import mig_changes
from compiler.resolve.node_names import PoolNodeNames, shared_name
from compiler.validate import validate_object
from tests import fleets
from tests.admission_harness import Cluster as Admission
from tests.conftest import PolicyWriter
from tests.oracle_policy import Cover, read_cluster
from tests.test_gpu_nodes import gpu_pod

GKE = ["gke-prod-a100-pool-1-abcd", "gke-prod-a100-pool-1-x7kq"]


def pools(a100_names: str, l40s: str = "nodes: 3") -> str:
    return f"""
    - name: a100
      gpu: A100-80GB
      gpusPerNode: 8
      hostMemory: 1Ti
      cpu: 128
      nodeNames: {a100_names}
    - {{name: l40s, {l40s}, gpu: L40S, gpusPerNode: 4, hostMemory: 512Gi, cpu: 64}}
"""


def position(text: str, needle: str, occurrence: int = 0) -> tuple[int, int]:
    """(line, column), 1-based, of the `occurrence`-th `needle` in `text`."""
    offset = -1
    for _ in range(occurrence + 1):
        offset = text.index(needle, offset + 1)
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def cluster_text(cluster_pools: str) -> str:
    return fleets.cluster(pools=cluster_pools, api_server=fleets.TAINT_RULES_ON_1_36)


def at(problem: Diagnostic) -> tuple[int, int]:
    return problem.span.line, problem.span.column


def taint(name: str, spec: str) -> str:
    return fleets.HEADER + f"kind: DeviceTaint\nmetadata: {{name: {name}}}\nspec: {spec}\n"


def compile_fleet(write_policies: PolicyWriter, cluster_pools: str, *taints: str) -> Compiled:
    return compile_policies(fleet_root(write_policies, cluster_pools, *taints))


def fleet_root(write_policies: PolicyWriter, cluster_pools: str, *taints: str) -> Path:
    return write_policies(
        {
            "c.yaml": cluster_text(cluster_pools),
            "t.yaml": fleets.tier("any", "{select: {models: [A100, L40S]}}"),
            "a.yaml": fleets.team("a", "[{tier: any, guaranteed: 8}]"),
            **{f"taint{i}.yaml": text for i, text in enumerate(taints)},
        }
    )


def failure(write_policies: PolicyWriter, cluster_pools: str, *taints: str) -> list[Diagnostic]:
    try:
        compile_fleet(write_policies, cluster_pools, *taints)
    except CompileError as error:
        return list(error.diagnostics)
    raise AssertionError("compiled")


def rules(compiled: Compiled) -> dict[str, dict]:  # type: ignore[type-arg]
    return {
        path.rsplit("/", 1)[1]: yaml.safe_load(text)
        for path, text in compiled.tree.items()
        if "/devicetaintrule_" in path
    }


def test_a_gke_pool_lists_its_nodes_and_a_taint_names_one(write_policies: PolicyWriter) -> None:
    """The issue's done-when: the taint's rule selects exactly the second node's devices."""
    root = fleet_root(
        write_policies,
        pools(f"[{', '.join(GKE)}]"),
        taint("ecc", "{cluster: c1, node: gke-prod-a100-pool-1-x7kq, key: example.com/ecc}"),
    )
    compiled = compile_policies(root)
    (pool,) = [p for p in compiled.fleet.clusters[0].pools if p.pool.name == "a100"]
    assert pool.pool.nodes == 2  # the number of names listed
    found = rules(compiled)
    assert list(found) == ["devicetaintrule_ecc.gke-prod-a100-pool-1-x7kq.yaml"]
    rule = found["devicetaintrule_ecc.gke-prod-a100-pool-1-x7kq.yaml"]
    # DRA pool = node name: every device of that node and of no other
    assert rule["spec"]["deviceSelector"] == {
        "driver": "gpu.nvidia.com",
        "pool": "gke-prod-a100-pool-1-x7kq",
    }
    validate_object(rule, "1.36")
    (resolved,) = compiled.fleet.clusters[0].taints
    (target,) = resolved.targets
    assert (target.pool.pool.name, target.node_indices) == ("a100", (1,))
    # the oracle's own reading finds the same node
    policies = build_policies(load_policies(root))
    (oracle_taint,) = read_cluster(policies, "c1").taints
    assert oracle_taint.covers == (Cover("a100", frozenset({1}), None),)


def test_a_taint_may_name_a_node_of_a_pattern_pool(write_policies: PolicyWriter) -> None:
    compiled = compile_fleet(
        write_policies,
        pools(f"[{', '.join(GKE)}]"),
        taint("maint", "{cluster: c1, node: c1-l40s-2, key: example.com/maint}"),
        taint("ecc", "{cluster: c1, pool: a100, node: 0, device: 3, key: example.com/ecc}"),
    )
    found = rules(compiled)
    assert found["devicetaintrule_maint.c1-l40s-2.yaml"]["spec"]["deviceSelector"] == {
        "driver": "gpu.nvidia.com",
        "pool": "c1-l40s-2",
    }
    # by index in a listed pool: node 0 is the first name
    selector = found["devicetaintrule_ecc.gke-prod-a100-pool-1-abcd.gpu-3.yaml"]["spec"]
    assert selector["deviceSelector"]["pool"] == "gke-prod-a100-pool-1-abcd"


def test_an_unknown_node_name_is_located_with_a_did_you_mean(
    write_policies: PolicyWriter,
) -> None:
    (problem,) = failure(
        write_policies,
        pools(f"[{', '.join(GKE)}]"),
        taint("ecc", "{cluster: c1, node: gke-prod-a100-pool-1-x7kg, key: example.com/ecc}"),
    )
    assert problem.code == "GF215"
    assert "names node 'gke-prod-a100-pool-1-x7kg'" in problem.message
    assert problem.span.file.endswith("taint0.yaml")
    line = "spec: {cluster: c1, node: gke-prod-a100-pool-1-x7kg, key: example.com/ecc}"
    assert (problem.span.line, problem.span.column) == (4, line.index("gke") + 1)
    assert problem.hints == ("did you mean 'gke-prod-a100-pool-1-x7kq'?",)
    (elsewhere,) = failure(
        write_policies,
        pools(f"[{', '.join(GKE)}]"),
        taint("ecc", "{cluster: c1, pool: l40s, node: gke-prod-a100-pool-1-x7kq, key: k.io/e}"),
    )
    assert elsewhere.code == "GF215"
    assert elsewhere.hints == ("node 'gke-prod-a100-pool-1-x7kq' is in pool 'a100'",)


def test_nodes_is_the_length_of_the_list_or_must_agree_with_it(
    write_policies: PolicyWriter,
) -> None:
    cluster_pools = pools(f"[{', '.join(GKE)}]").replace(
        "      gpu: A100", "      nodes: 3\n      gpu: A100"
    )
    (problem,) = failure(write_policies, cluster_pools)
    assert problem.code == "GF216"
    assert "`nodes` is 3 but `nodeNames` lists 2 nodes" in problem.message
    assert at(problem) == position(cluster_text(cluster_pools), "3\n      gpu: A100")
    agreeing = cluster_pools.replace("nodes: 3\n", "nodes: 2\n")
    assert compile_fleet(write_policies, agreeing).fleet.clusters[0].pools[0].pool.nodes == 2


def test_a_pattern_pool_still_needs_nodes(write_policies: PolicyWriter) -> None:
    (problem,) = failure(write_policies, pools('"gpu-{index}"'))
    assert problem.code == "GF108" and "`nodes`" in problem.message


def test_a_listed_name_must_be_a_dns_subdomain_and_is_not_normalised(
    write_policies: PolicyWriter,
) -> None:
    listed = pools("[gke-a, GKE_B, gke-c]")
    (problem,) = failure(write_policies, listed)
    assert problem.code == "GF107"
    assert "'GKE_B' is not a node name" in problem.message
    assert at(problem) == position(cluster_text(listed), "GKE_B")
    (dots,) = failure(write_policies, pools("[a..b]"))
    assert dots.code == "GF107" and "'a..b' is not a node name" in dots.message
    (long,) = failure(write_policies, pools(f"[{'a' * 254}]"))
    assert long.code == "GF107" and "253" in long.message


def test_a_name_listed_twice_is_reported_at_the_second(write_policies: PolicyWriter) -> None:
    listed = pools("[n-1, n-2, n-1]")
    (problem,) = failure(write_policies, listed)
    assert problem.code == "GF238"
    assert "'n-1' of pool 'a100' (node 2) is already node 0 of pool 'a100'" in problem.message
    assert at(problem) == position(cluster_text(listed), "n-1", 1)
    (related,) = problem.related
    assert (related[1].line, related[1].column) == position(cluster_text(listed), "n-1")


def test_names_clash_across_pools_lists_and_patterns(write_policies: PolicyWriter) -> None:
    # a listed name that the later pool's pattern also gives
    listed = pools("[x-1, c1-l40s-2]")
    (problem,) = failure(write_policies, listed)
    assert problem.code == "GF238" and "'c1-l40s-2' of pool 'l40s' (node 2)" in problem.message
    # the l40s pool writes no nodeNames (the default pattern): its entry in the list
    assert at(problem) == position(cluster_text(listed), "{name: l40s")
    # a pattern's name listed by a later pool
    listed_later = pools('"c1-l40s-{index}"', "nodeNames: [n-0, c1-l40s-1]").replace(
        "      gpu: A100", "      nodes: 4\n      gpu: A100"
    )
    (problem,) = failure(write_policies, listed_later)
    assert problem.code == "GF238" and "'c1-l40s-1' of pool 'l40s' (node 1)" in problem.message
    assert "node 1 of pool 'a100'" in problem.message
    # two patterns that meet: a{index} and a1{index} both give a10
    patterns = pools('"a{index}"', "nodes: 3, nodeNames: 'a1{index}'").replace(
        "      gpu: A100", "      nodes: 12\n      gpu: A100"
    )
    (problem,) = failure(write_policies, patterns)
    assert problem.code == "GF238" and "'a10' of pool 'l40s' (node 0)" in problem.message
    assert "node 10 of pool 'a100'" in problem.message


def naming(cluster: str, *pools: dict[str, object]) -> list[PoolNodeNames]:
    base = {"gpu": "L40S", "gpusPerNode": 4, "hostMemory": "1Ti", "cpu": 8}
    return [
        PoolNodeNames(cluster, NodePool.model_validate({**base, **p}), i)
        for i, p in enumerate(pools)
    ]


def test_a_pattern_finds_its_nodes_by_name_without_listing_them() -> None:
    (pool,) = naming("c", {"name": "p", "nodes": 100_000, "nodeNames": "{cluster}-{index}.{pool}"})
    assert pool.index("c-99999.p") == 99_999
    assert pool.index("c-100000.p") is None  # past the pool
    assert pool.index("c-007.p") is None  # str(7) has no leading zero
    (twice,) = naming("c", {"name": "p", "nodes": 20, "nodeNames": "n{index}-{index}"})
    assert twice.index("n12-12") == 12 and twice.index("n12-13") is None
    (single,) = naming("c", {"name": "p", "nodes": 1, "nodeNames": "only"})
    assert single.index("only") == 0 and single.index("only0") is None


class Unlisted(PoolNodeNames):
    """A pattern pool whose names must not be enumerated."""

    def names(self) -> Iterator[str]:
        raise AssertionError(f"enumerated the names of {self.pool.name}")


def test_far_apart_patterns_are_not_compared_name_by_name() -> None:
    """h100 and h100-mig share a prefix, but `mig-` cannot be an index's digits: no name is
    shared, and a 100,000-node pool is not enumerated to find that out."""
    base = {"gpu": "L40S", "gpusPerNode": 4, "hostMemory": "1Ti", "cpu": 8, "nodes": 100_000}
    h100, mig, suffixed = (
        Unlisted("c", NodePool.model_validate({**base, **extra}), i)
        for i, extra in enumerate(
            [
                {"name": "h100"},
                {"name": "h100-mig"},
                {"name": "h100-x", "nodeNames": "c-h100-{index}x"},
            ]
        )
    )
    assert shared_name(h100, mig) is None and shared_name(mig, h100) is None
    assert shared_name(h100, suffixed) is None
    (small,) = naming("c", {"name": "h100-b", "nodes": 3, "nodeNames": "c-h100-1{index}"})
    assert shared_name(small, h100) == ("c-h100-10", 0, 10)


def test_names_of_253_characters_give_valid_rules_and_files(write_policies: PolicyWriter) -> None:
    first, second = (("a" * 63 + ".") * 3 + "b" * 59 + f"-{i}" for i in (1, 2))
    assert len(first) == DNS_SUBDOMAIN_MAX and is_dns_subdomain(first)
    compiled = compile_fleet(
        write_policies,
        pools(f"[{first}, {second}]"),
        taint("maint", "{cluster: c1, pool: a100, key: example.com/maint}"),
    )
    found = rules(compiled)
    assert len(found) == 2
    names = sorted(r["metadata"]["name"] for r in found.values())
    assert names == sorted(shortened(f"maint.{n}", DNS_SUBDOMAIN_MAX) for n in (first, second))
    assert all(len(n) <= DNS_SUBDOMAIN_MAX and is_dns_subdomain(n) for n in names)
    assert all(len(file) <= FILE_NAME_MAX for file in found)
    assert sorted(r["spec"]["deviceSelector"]["pool"] for r in found.values()) == [first, second]
    for rule in found.values():
        validate_object(rule, "1.36")


def test_shortened_is_stable_and_keeps_different_names_apart() -> None:
    long = "x" * 300
    assert shortened(long, 253) == shortened(long, 253)
    assert len(shortened(long, 253)) == 253
    assert shortened(long, 253) != shortened(long + "y", 253)
    assert shortened("short", 253) == "short"
    assert not shortened("a" * 240 + "-" * 10 + "b" * 10, 253)[:240].endswith("-")


def test_a_pod_may_not_name_a_listed_gpu_node_without_claiming(
    write_policies: PolicyWriter,
) -> None:
    compiled = compile_fleet(write_policies, pools(f"[{', '.join(GKE)}]"))
    admission = Admission.from_tree(compiled.tree, "c1")
    decision = admission.admit(gpu_pod("a", claims=False, node=GKE[1]))
    assert decision.outcome == "denied" and decision.policy == "gpufleet-gpu-nodes"
    assert f"names node {GKE[1]} of a GPU pool" in decision.message
    pattern = admission.admit(gpu_pod("a", claims=False, node="c1-l40s-0"))
    assert pattern.outcome == "denied"
    assert admission.admit(gpu_pod("a", claims=False, node="cpu-1")).outcome == "allowed"


def mig_fleet(write_policies: PolicyWriter, names: list[str]) -> Path:
    """A pool of listed H100 nodes shared by whole-GPU and 3g.40gb guarantees of two nodes each."""
    pool = (
        "\n    - {name: h100, gpu: H100-80GB, gpusPerNode: 8, hostMemory: 2Ti, cpu: 224,"
        f" mig: allowed, nodeNames: [{', '.join(names)}]}}\n"
    )
    return write_policies(
        {
            "c.yaml": fleets.cluster(pools=pool),
            "whole.yaml": fleets.tier("whole", "{select: {models: [H100]}}"),
            "slice.yaml": fleets.tier("slice", "{partition: 3g.40gb}"),
            "a.yaml": fleets.team("a", "[{tier: whole, guaranteed: 16}]"),
            "b.yaml": fleets.team("b", "[{tier: slice, guaranteed: 32}]"),
        }
    )


def labels_by_name(compiled: Compiled) -> dict[str, str]:
    (plan,) = compiled.plans
    (pool,) = compiled.fleet.clusters[0].pools
    return {pool.pool.node_name("c", i): label for i, label in enumerate(plan.labels("h100"))}


def test_a_node_removed_from_a_list_leaves_the_others_configured(
    write_policies: PolicyWriter,
) -> None:
    # The plan remembers listed nodes by name: removing a node from the middle of a list must not
    # shift every later node's MIG configuration onto its neighbour (which would drain them).
    names = [f"gke-prod-h100-{suffix}" for suffix in ("q1", "w2", "e3", "r4", "t5", "y6")]
    before = compile_policies(mig_fleet(write_policies, names))
    labels = labels_by_name(before)
    assert len(set(labels.values())) == 2, labels  # whole GPUs and 3g.40gb layouts both in use
    boundary = next(i for i in range(len(names) - 1) if labels[names[i]] != labels[names[i + 1]])
    kept = names[:boundary] + names[boundary + 1 :]
    after = compile_policies(
        mig_fleet(write_policies, kept), previous={p.cluster: p.steering for p in before.plans}
    )
    assert labels_by_name(after) == {name: labels[name] for name in kept}
    assert after.plans[0].changed_nodes == ()
    assert mig_changes(before.plans[0], after.plans[0], {"h100": 8}) == []  # nothing to drain
    written = ClusterPlan.from_json(after.plans[0].to_json())
    assert written.node_names == {"h100": tuple(kept)}
