"""Each emitted cluster tree on a real kube-apiserver of the cluster's Kubernetes version,
started with exactly the flags the Cluster declares: applied wave by wave with no warning,
idempotent, every policy type-checked clean, and the admission table holding for every team."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.generate import Size, generate
from compiler.ir import ResolvedCluster
from compiler.model.policy import Fleet, PriorityLadder
from compiler.pipeline import check_policies
from compiler.versions import Feature
from tests.e2e.admission_table import Row, admission_table, claim, exactly
from tests.e2e.control_plane import (
    Cluster,
    apply_in_waves,
    bind_teams,
    control_plane,
    install_gpu_runtime_class,
    manifest_paths,
    wait_for_type_checking,
)
from tests.e2e.policies import EXAMPLE, compile_tree, gpu_runtime_classes, resolved


def field(obj: dict[str, Any], path: str) -> Any:
    for part in path.split("."):
        obj = obj.get(part, {}) if isinstance(obj, dict) else {}
    return obj if obj != {} else None


def used(cluster: Cluster, namespace: str, key: str) -> int:
    quota = cluster.get("resourcequota", "gpufleet-devices", "-n", namespace)
    return int(quota.get("status", {}).get("used", {}).get(key, "0"))


def run_row(cluster: Cluster, row: Row) -> str | None:
    """What went wrong with one row, or None when the server did what the policy says."""
    manifest = row.manifest
    before = {key: used(cluster, row.namespace, key) for key in row.devices}
    expected = dict(row.devices)
    if row.fill_to:
        ((key, _),) = row.devices.items()
        expected[key] = row.fill_to - before[key]
        if expected[key] <= 0:
            return None
        manifest["spec"]["devices"]["requests"][0]["exactly"]["count"] = expected[key]
    done = cluster.create(manifest, team=row.team, dry_run=row.dry_run)
    if row.allowed and done.returncode != 0:
        return f"denied: {done.stderr.strip()}"
    if not row.allowed:
        if done.returncode == 0:
            return "allowed"
        missing = [text for text in row.says if text not in done.stderr]
        return f"denied without {missing}: {done.stderr.strip()}" if missing else None
    admitted = json.loads(done.stdout)
    for path, value in row.expect.items():
        if (found := field(admitted["spec"], path)) != value:
            return f"spec.{path} is {found!r}, not {value!r}"
    for key, count in expected.items():
        if (after := used(cluster, row.namespace, key)) != before[key] + count:
            return f"quota {key} went {before[key]} -> {after}, not +{count}"
    return None


def check_admission_table(
    cluster: Cluster,
    resolved_cluster: ResolvedCluster,
    ladder: PriorityLadder,
    runtime_classes: list[str],
) -> int:
    """Run every row; fail with the whole table of rows the server decided otherwise."""
    rows = list(
        admission_table(
            resolved_cluster,
            ladder,
            cluster.tree,
            resolved_cluster.serves(Feature.MUTATING_ADMISSION_POLICY),
            runtime_classes,
        )
    )
    wrong = []
    for row in rows:
        problem = run_row(cluster, row)
        if problem:
            expected = "allowed" if row.allowed else "denied"
            wrong.append(f"{row.team} in {row.namespace}: {row.what} ({expected}): {problem}")
    assert not wrong, "\n".join(wrong)
    return len(rows)


def check_cluster(policies: Path, out: Path, name: str, state_dir: Path) -> None:
    """The whole real-cluster check of one cluster of a compiled policy tree."""
    clusters, ladder = resolved(policies)
    resolved_cluster = clusters[name]
    tree = out / "clusters" / name
    with control_plane(resolved_cluster, tree, state_dir) as cluster:
        printed = apply_in_waves(cluster)
        assert printed == [], "the server or kubectl warned:\n" + "\n".join(printed)
        first = cluster.stored()
        assert len(first) == len(manifest_paths(tree))
        assert apply_in_waves(cluster) == []
        assert cluster.stored() == first, "a second apply changed objects"
        statuses = wait_for_type_checking(cluster)
        assert statuses, "no admission policy"
        warnings = {
            n: s.get("typeChecking", {}).get("expressionWarnings") for n, s in statuses.items()
        }
        assert not any(warnings.values()), warnings
        bind_teams(cluster, resolved_cluster)
        install_gpu_runtime_class(cluster)
        rows = check_admission_table(
            cluster, resolved_cluster, ladder, gpu_runtime_classes(policies)
        )
        assert rows > 10 * len(resolved_cluster.teams)
        check_unowned_claims(cluster, resolved_cluster, check_policies(policies)[0].fleet)


def check_unowned_claims(
    cluster: Cluster, resolved_cluster: ResolvedCluster, fleet: Fleet | None
) -> None:
    """Where the fleet opts in, a GPU claim in a namespace no team owns is refused, even to the
    admin; in a system namespace (the GPU operator's) it is not."""
    if fleet is None or not fleet.spec.deny_unowned_claims:
        return
    api = resolved_cluster.target.dra_api
    tier = resolved_cluster.tiers[0].name
    for namespace, refused in (
        ("e2e-unowned", True),
        (fleet.spec.system_namespaces.gpu_operator, False),
    ):
        cluster.kubectl("create", "namespace", namespace)
        for device_class in (tier, resolved_cluster.cluster.spec.driver):
            done = cluster.create(
                claim(namespace, "unowned", api, exactly(device_class)), team=None, dry_run=True
            )
            assert (done.returncode != 0) == refused, (namespace, device_class, done.stderr)
            if refused:
                assert "gpufleet-unowned-claims" in done.stderr and "no team" in done.stderr, (
                    done.stderr
                )


@pytest.mark.parametrize("name", ["prod-east", "prod-west"])
def test_example_cluster_on_a_real_api_server(example: Path, name: str, tmp_path: Path) -> None:
    check_cluster(EXAMPLE, example, name, tmp_path / "kube")


def test_a_generated_fleet_with_several_teams_per_tier(tmp_path: Path) -> None:
    """A fleet the example does not cover: three teams share each tier (MIG tiers included),
    random priorities, gangs, and device taints the 1.36 cluster does not serve rules for."""
    policies = tmp_path / "policies"
    generate(Size(1, 24, 12, 4, 0.3, 0.05), seed=7, root=policies)
    fleet, _ = check_policies(policies)
    (cluster,) = fleet.clusters
    tiers = [g.tier for g in cluster.guarantees]
    assert all(tiers.count(tier) >= 3 for tier in tiers)
    out = tmp_path / "out"
    compile_tree(policies, out)
    check_cluster(policies, out, cluster.name, tmp_path / "kube")


def without_api_server_declarations(policies: Path, into: Path) -> Path:
    """A copy of the policies whose Clusters declare nothing beyond their release defaults."""
    shutil.copytree(policies, into)
    for path in into.rglob("*.yaml"):
        text = path.read_text()
        if "apiServer:" in text:
            path.write_text(re.sub(r"  apiServer:.*\n(    .*\n)*", "", text))
    return into


def test_device_taint_rules_follow_what_the_cluster_serves(example: Path, tmp_path: Path) -> None:
    """Declared on: the DeviceTaintRules are emitted and the server started with exactly
    those flags takes them. Not declared: they are left out, the tree applies on a stock
    server, and that server indeed refuses the declared tree's rules."""
    declared_rules = sorted(
        (example / "clusters" / "prod-east" / "_cluster").glob("devicetaintrule_*")
    )
    assert declared_rules, "prod-east declares the DeviceTaintRule API on"
    plain = without_api_server_declarations(EXAMPLE, tmp_path / "policies")
    out = tmp_path / "out"
    compile_tree(plain, out)
    tree = out / "clusters" / "prod-east"
    assert not list((tree / "_cluster").glob("devicetaintrule_*"))
    clusters, _ = resolved(plain)
    with control_plane(clusters["prod-east"], tree, tmp_path / "kube") as cluster:
        assert apply_in_waves(cluster) == []
        refused = cluster.kubectl("apply", "--server-side", "-f", str(declared_rules[0]))
        assert refused.returncode != 0
        assert "DeviceTaintRule" in refused.stderr
    with control_plane(
        resolved(EXAMPLE)[0]["prod-east"], example / "clusters" / "prod-east", tmp_path / "kube2"
    ) as cluster:
        assert apply_in_waves(cluster) == []
        rules = cluster.get("devicetaintrules")["items"]
        assert sorted(r["metadata"]["name"] for r in rules) == sorted(
            yaml.safe_load(p.read_text())["metadata"]["name"] for p in declared_rules
        )
