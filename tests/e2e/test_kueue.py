"""The real Kueue manager, of the cluster's Kueue minor, started with the Configuration
gpufleet emits, admits exactly what the policy promises: every team at its guarantee at once,
borrowing up to the limit only from what the cohort lends, nothing beyond a limit, no GPU job
around the queues; and gpufleet's next server-side apply does not conflict with what Kueue
wrote. Expected outcomes come from the policy (Team quotas) and the solved plan."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import kubelocal
import pytest
import yaml

from benchmarks.generate import Size, generate
from compiler.emit.kueue_quota import cohort_groups
from compiler.ir import HOST_FLAVOR, ClusterPlan, ResolvedCluster
from compiler.kueue_versions import KUEUE_RELEASES
from compiler.pipeline import check_policies
from tests.e2e import kueue_manager
from tests.e2e.admission_table import templates
from tests.e2e.control_plane import Cluster, apply_in_waves, bind_teams, control_plane
from tests.e2e.policies import EXAMPLE, compile_tree

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def job(namespace: str, name: str, template: str, pods: int, queue: bool = True) -> dict[str, Any]:
    """A suspended batch/v1 Job of `pods` pods, each claiming one device set from `template`."""
    labels = {QUEUE_LABEL: "default"} if queue else {}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "suspend": True,
            "parallelism": pods,
            "completions": pods,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": template}],
                    "containers": [
                        {
                            "name": "main",
                            "image": "registry.invalid/e2e:1",
                            "resources": {"claims": [{"name": "gpu"}]},
                        }
                    ],
                }
            },
        },
    }


def per_pod(tree: Path, namespace: str, tier: str, gang: int) -> tuple[str, int]:
    """The namespace's template for `tier` whose device count is the gang size (or 1)."""
    for template in templates(tree, namespace):
        (request,) = template["spec"]["spec"]["devices"]["requests"]
        exact = request["exactly"]
        if exact["deviceClassName"] == tier and exact["count"] == gang:
            return template["metadata"]["name"], gang
    raise AssertionError(f"no {tier} template of {gang} devices in {namespace}")


def submit(cluster: Cluster, team: str, manifest: dict[str, Any]) -> None:
    done = cluster.create(manifest, team=team)
    assert done.returncode == 0, done.stderr


def decision(cluster: Cluster, namespace: str, name: str) -> kueue_manager.Workload:
    return kueue_manager.wait_for_workload(
        cluster.plane, namespace, name, kueue_manager.decided, timeout=60
    )


def wait_active(cluster: Cluster, kind: str, timeout: float = 60) -> int:
    """Every object of a Kueue kind reports condition Active=True; how many there are."""
    deadline = time.monotonic() + timeout
    while True:
        items = cluster.get(f"{kind}.kueue.x-k8s.io", "-A")["items"]
        inactive = [
            i["metadata"]["name"]
            for i in items
            if not any(
                c["type"] == "Active" and c["status"] == "True"
                for c in i.get("status", {}).get("conditions", [])
            )
        ]
        if not inactive:
            return len(items)
        assert time.monotonic() < deadline, f"{kind} not active: {inactive}"
        time.sleep(0.5)


def lendable(cluster: ResolvedCluster, plan: ClusterPlan) -> dict[str, int]:
    """tier -> devices the root cohort lends (its nominal quota, from the solved plan)."""
    return {
        g.flavor: int(g.quotas[0].nominal)
        for g in cohort_groups(cluster, plan)
        if g.flavor != HOST_FLAVOR
    }


def check_kueue(policies: Path, out: Path, name: str, state_dir: Path, version: str) -> None:
    fleet, plans = check_policies(policies)
    resolved = next(c for c in fleet.clusters if c.name == name)
    plan = next(p for p in plans if p.cluster == name)
    tree = out / "clusters" / name
    configuration = tree / "kueue-config" / "configuration.yaml"
    with control_plane(resolved, tree, state_dir) as cluster:
        assert apply_in_waves(cluster) == []
        bind_teams(cluster, resolved)
        with kueue_manager.running(cluster.plane, configuration, version=version):
            queues = [p for p in manifest_names(tree) if p.startswith("clusterqueue_")]
            assert wait_active(cluster, "clusterqueues") == len(queues)
            assert wait_active(cluster, "localqueues") == len(
                [p for p in manifest_names(tree) if p.startswith("localqueue_")]
            )
            held = _every_team_at_its_guarantee(cluster, resolved, tree)
            _borrowing_and_limits(cluster, resolved, plan, tree, held)
            _no_job_around_the_queues(cluster, resolved, tree)
            # Kueue has reconciled every queue: gpufleet's next sync must not conflict
            assert apply_in_waves(cluster, kueue_crds=False) == []


def manifest_names(tree: Path) -> list[str]:
    return [
        Path(r).name for r in yaml.safe_load((tree / "kustomization.yaml").read_text())["resources"]
    ]


def _every_team_at_its_guarantee(
    cluster: Cluster, resolved: ResolvedCluster, tree: Path
) -> dict[tuple[str, str], str]:
    """One Job per guarantee, asking exactly for it, all submitted at once: Kueue admits them
    all together. (team, tier) -> the namespace that borrows for it."""
    submitted = []
    borrowers: dict[tuple[str, str], str] = {}
    for guarantee in resolved.guarantees:
        borrowers.setdefault((guarantee.team.name, guarantee.tier), guarantee.namespace)
        if not guarantee.count:
            continue
        template, count = per_pod(tree, guarantee.namespace, guarantee.tier, guarantee.gang)
        name = f"guarantee-{guarantee.tier}"
        submit(
            cluster,
            guarantee.team.name,
            job(guarantee.namespace, name, template, guarantee.count // count),
        )
        submitted.append((guarantee, name))
    assert submitted
    for guarantee, name in submitted:
        workload = decision(cluster, guarantee.namespace, name)
        assert kueue_manager.admitted(workload), (guarantee.key, workload.get("status"))
        charged = kueue_manager.usage(workload)[f"gpufleet.dev/{guarantee.tier}"]
        assert int(charged) == guarantee.count, guarantee.key
        # the tier's flavor tolerates its GPU nodes' taint, and Kueue gives the started job it
        wanted = [
            {"operator": "Equal", **t.model_dump()}
            for t in resolved.tier_node_taints(guarantee.tier)
        ]
        started = _started_template(cluster, guarantee.namespace, name)
        assert all(t in started.get("tolerations", []) for t in wanted), (guarantee.key, started)
    return borrowers


def _started_template(cluster: Cluster, namespace: str, name: str) -> dict[str, Any]:
    """The pod template of a Job once Kueue has started it (unsuspended, flavor applied)."""
    deadline = time.monotonic() + 30
    while True:
        stored = cluster.get("job", name, "-n", namespace)
        if stored["spec"].get("suspend") is False or time.monotonic() > deadline:
            spec: dict[str, Any] = stored["spec"]["template"]["spec"]
            return spec
        time.sleep(0.5)


def _borrowing_and_limits(
    cluster: Cluster,
    resolved: ResolvedCluster,
    plan: ClusterPlan,
    tree: Path,
    borrowers: dict[tuple[str, str], str],
) -> None:
    """With every guarantee in use, a team borrows up to its limit exactly when the cohort
    lends that much, and never one device beyond its limit."""
    lends = lendable(resolved, plan)
    limits: dict[tuple[str, str], tuple[int, int]] = {}
    for g in resolved.guarantees:
        got, cap = limits.get((g.team.name, g.tier), (0, 0))
        limits[g.team.name, g.tier] = (got + g.count, cap + g.limit)
    for (team, tier), (guaranteed, limit) in sorted(limits.items()):
        namespace = borrowers[team, tier]
        template, _ = per_pod(tree, namespace, tier, 1)
        extra = limit - guaranteed
        beyond = job(namespace, f"beyond-{tier}", template, extra + 1)
        submit(cluster, team, beyond)
        assert not kueue_manager.admitted(decision(cluster, namespace, f"beyond-{tier}")), (
            f"{team} got {tier} beyond its limit {limit}"
        )
        cluster.kubectl("delete", "job", f"beyond-{tier}", "-n", namespace, "--wait=true")
        if not extra:
            continue
        submit(cluster, team, job(namespace, f"borrow-{tier}", template, extra))
        workload = decision(cluster, namespace, f"borrow-{tier}")
        assert kueue_manager.admitted(workload) == (extra <= lends.get(tier, 0)), (
            f"{team} borrowing {extra} {tier}, the cohort lends {lends.get(tier, 0)}",
            workload.get("status"),
        )
        cluster.kubectl("delete", "job", f"borrow-{tier}", "-n", namespace, "--wait=true")


def _no_job_around_the_queues(cluster: Cluster, resolved: ResolvedCluster, tree: Path) -> None:
    """A GPU Job without a queue label in a team namespace goes to the default queue, held
    (suspended) until Kueue admits it; with every guarantee in use and its limit reached, it
    waits."""
    guarantee = next(g for g in resolved.guarantees if g.count)
    template, _ = per_pod(tree, guarantee.namespace, guarantee.tier, 1)
    limit = sum(
        g.limit for g in resolved.guarantees if (g.team, g.tier) == (guarantee.team, guarantee.tier)
    )
    unlabelled = job(guarantee.namespace, "no-queue", template, limit + 1, queue=False)
    submit(cluster, guarantee.team.name, unlabelled)
    workload = decision(cluster, guarantee.namespace, "no-queue")
    assert not kueue_manager.admitted(workload)
    stored = cluster.get("job", "no-queue", "-n", guarantee.namespace)
    assert stored["spec"]["suspend"] is True
    assert stored["metadata"]["labels"].get(QUEUE_LABEL) == "default"


def kueue_clusters() -> list[tuple[str, str]]:
    fleet, _ = check_policies(EXAMPLE)
    return [
        (c.name, c.cluster.spec.kueue.version)
        for c in fleet.clusters
        if c.cluster.spec.kueue.enabled
    ]


@pytest.mark.parametrize(("name", "version"), kueue_clusters())
def test_kueue_admits_what_the_example_promises(
    example: Path, name: str, version: str, tmp_path: Path
) -> None:
    check_kueue(EXAMPLE, example, name, tmp_path / "kube", version)


@pytest.mark.parametrize("version", sorted(KUEUE_RELEASES))
def test_each_supported_kueue_minor_runs_its_emitted_configuration(
    tmp_path: Path, version: str
) -> None:
    """A generated fleet (three teams per tier, MIG tiers, gangs) on each supported minor."""
    policies = tmp_path / "policies"
    generate(Size(1, 24, 12, 4, 0.3, 0.0), seed=11, root=policies)
    (cluster_file,) = (policies / "clusters").glob("*.yaml")
    text = cluster_file.read_text()
    cluster_file.write_text(text + f'  kueue: {{enabled: true, version: "{version}"}}\n')
    out = tmp_path / "out"
    compile_tree(policies, out)
    name = cluster_file.stem
    check_kueue(policies, out, name, tmp_path / "kube", version)


def test_kueue_0_18_exits_on_the_gate_gpufleet_used_to_set(example: Path, tmp_path: Path) -> None:
    """Why the Configuration names no gate: 0.18 locked its old DRA gate name off."""
    fleet, _ = check_policies(EXAMPLE)
    resolved = next(c for c in fleet.clusters if c.cluster.spec.kueue.enabled)
    tree = example / "clusters" / resolved.name
    emitted = yaml.safe_load((tree / "kueue-config" / "configuration.yaml").read_text())
    assert "featureGates" not in emitted
    old = {**emitted, "featureGates": {"DynamicResourceAllocation": True}}
    del old["apiVersion"], old["kind"]
    with (
        control_plane(resolved, tree, tmp_path / "kube") as cluster,
        pytest.raises(kubelocal.KubeLocalError, match="locked to false"),
        kueue_manager.running(cluster.plane, old, version="0.18"),
    ):
        pass
