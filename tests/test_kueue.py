"""Kueue: queue arithmetic against the solved plan, preemption from the ladder, CRD schema
and CEL rules (with structural defaults) on every object."""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any

import pytest
import yaml

from compiler.emit.kueue import preemption
from compiler.emit.kueue_quota import cohort_groups, overcommitted, team_groups
from compiler.ir import HOST_FLAVOR
from compiler.pipeline import Compiled
from compiler.quantity import parse_quantity
from compiler.validate import (
    CelRuleViolation,
    check_cel_rules,
    crd_schema,
    validate_object,
    with_defaults,
)

EAST = "clusters/prod-east"


def load(compiled: Compiled, path: str) -> dict[str, Any]:
    return yaml.safe_load(compiled.tree[path])


def kueue_objects(compiled: Compiled) -> list[dict[str, Any]]:
    return [
        yaml.safe_load(text)
        for path, text in compiled.tree.items()
        if path.endswith(".yaml") and "kueue.x-k8s.io/" in text.split("\n", 1)[0]
    ]


def quotas(obj: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (flavor["name"], r["name"]): r
        for group in obj["spec"].get("resourceGroups", [])
        for flavor in group["flavors"]
        for r in flavor["resources"]
    }


def test_every_kueue_object_passes_its_crd_schema_and_cel_rules(compiled_example: Compiled) -> None:
    objects = kueue_objects(compiled_example)
    kinds = {o["kind"] for o in objects}
    assert kinds == {
        "ResourceFlavor",
        "Cohort",
        "ClusterQueue",
        "LocalQueue",
        "WorkloadPriorityClass",
    }
    for obj in objects:
        validate_object(obj, "1.36")
    queue = load(compiled_example, f"{EAST}/_cluster/clusterqueue_ml-research.yaml")
    schema = crd_schema("kueue.x-k8s.io", "ClusterQueue", "v1beta2")
    assert check_cel_rules(with_defaults(queue, schema), schema) >= 4


def test_cel_rules_reject_what_the_api_server_would(compiled_example: Compiled) -> None:
    queue = load(compiled_example, f"{EAST}/_cluster/clusterqueue_ml-research.yaml")
    # reclaimWithinCohort defaults to Never, which forbids borrowWithinCohort: only the
    # defaulted object breaks the rule
    del queue["spec"]["preemption"]["reclaimWithinCohort"]
    with pytest.raises(CelRuleViolation, match="reclaimWithinCohort=Never"):
        validate_object(queue, "1.36")
    queue = load(compiled_example, f"{EAST}/_cluster/clusterqueue_ml-research.yaml")
    del queue["spec"]["cohortName"]
    with pytest.raises(CelRuleViolation, match="borrowingLimit must be nil"):
        validate_object(queue, "1.36")
    queue = load(compiled_example, f"{EAST}/_cluster/clusterqueue_ml-research.yaml")
    queue["spec"]["resourceGroups"][1]["coveredResources"].append("pods")
    with pytest.raises(CelRuleViolation, match="same number of resources"):
        validate_object(queue, "1.36")
    flavor = load(compiled_example, f"{EAST}/_cluster/resourceflavor_training.yaml")
    flavor["spec"] = {"nodeTaints": [{"key": "a", "value": "b", "effect": "PreferNever"}]}
    with pytest.raises(CelRuleViolation, match="supported taint effect"):
        validate_object(flavor, "1.36")


def test_cluster_queue_quota_is_guarantee_and_borrowing_is_limit_minus_guarantee(
    compiled_example: Compiled,
) -> None:
    queue = load(compiled_example, f"{EAST}/_cluster/clusterqueue_ml-research.yaml")
    q = quotas(queue)
    assert q["training", "gpufleet.dev/training"] == {
        "name": "gpufleet.dev/training",
        "nominalQuota": "64",
        "borrowingLimit": "32",
    }
    # host: 24 CPUs and 200Gi per training GPU
    assert q[HOST_FLAVOR, "cpu"]["nominalQuota"] == str(64 * 24)
    assert q[HOST_FLAVOR, "cpu"]["borrowingLimit"] == str(32 * 24)
    assert parse_quantity(q[HOST_FLAVOR, "memory"]["nominalQuota"]) == 64 * 200 * 2**30
    serving = quotas(load(compiled_example, f"{EAST}/_cluster/clusterqueue_llm-serving.yaml"))
    # two namespaces: 48/64 and 4/8 add up
    assert serving["inference", "gpufleet.dev/inference"]["nominalQuota"] == "52"
    assert serving["inference", "gpufleet.dev/inference"]["borrowingLimit"] == "20"
    science = quotas(load(compiled_example, f"{EAST}/_cluster/clusterqueue_data-science.yaml"))
    assert science["general", "gpufleet.dev/general"]["borrowingLimit"] == "8"


def test_every_kueue_quantity_is_a_string_as_kueue_writes_it_back(
    compiled_example: Compiled,
) -> None:
    """Kueue's controller rewrites a bare integer quantity as a string and takes the atomic
    resourceGroups over: the next server-side apply of gpufleet's field manager conflicts."""
    checked = 0
    for path in compiled_example.tree:
        if path.startswith(f"{EAST}/_cluster/") and ("clusterqueue_" in path or "cohort_" in path):
            for (_, _), quota in quotas(load(compiled_example, path)).items():
                for field in ("nominalQuota", "borrowingLimit"):
                    if field in quota:
                        assert isinstance(quota[field], str), (path, quota)
                        checked += 1
    assert checked > 20


def test_nominal_quota_per_flavor_never_exceeds_solved_capacity(compiled_example: Compiled) -> None:
    for cluster, plan in zip(compiled_example.fleet.clusters, compiled_example.plans, strict=True):
        if not cluster.cluster.spec.kueue.enabled:
            continue
        total: dict[str, Fraction] = {}
        groups = [g for team in cluster.teams for g in team_groups(cluster, team)]
        for group in [*groups, *cohort_groups(cluster, plan)]:
            if group.flavor != HOST_FLAVOR:
                total[group.flavor] = total.get(group.flavor, Fraction(0)) + group.quotas[0].nominal
        capacity = {t.tier: t.capacity for t in plan.tiers}
        assert total.keys() == capacity.keys()
        for flavor, nominal in total.items():
            assert nominal <= capacity[flavor], flavor
        # training and large-memory share the H200s: their free devices are offered once
        assert total["training"] + total["large-memory"] <= capacity["training"]
        assert total["training"] == capacity["training"]


def test_cohort_holds_the_headroom_and_team_cohorts_hang_below_it(
    compiled_example: Compiled,
) -> None:
    root = load(compiled_example, f"{EAST}/_cluster/cohort_prod-east.yaml")
    plan = {t.tier: t for t in compiled_example.plans[0].tiers}
    assert (
        int(quotas(root)["general", "gpufleet.dev/general"]["nominalQuota"])
        == plan["general"].headroom
    )
    assert "parentName" not in root["spec"]
    child = load(compiled_example, f"{EAST}/_cluster/cohort_research.yaml")
    assert child["spec"] == {"parentName": "prod-east"}
    queue = load(compiled_example, f"{EAST}/_cluster/clusterqueue_ml-research.yaml")
    assert queue["spec"]["cohortName"] == "research"
    other = load(compiled_example, f"{EAST}/_cluster/clusterqueue_llm-serving.yaml")
    assert other["spec"]["cohortName"] == "prod-east"


def test_preemption_follows_the_ladder(compiled_example: Compiled) -> None:
    cluster = compiled_example.fleet.clusters[0]
    ladder = compiled_example.fleet.ladder
    teams = {t.name: t for t in cluster.teams}
    assert preemption(teams["ml-research"], ladder) == {
        "reclaimWithinCohort": "Any",
        "withinClusterQueue": "LowerPriority",
        # borrowers preempt only `batch`, the level that never preempts
        "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 100},
    }
    # data-science may only use `batch`, which never preempts
    assert preemption(teams["data-science"], ladder) == {
        "reclaimWithinCohort": "Any",
        "withinClusterQueue": "Never",
    }


def test_default_local_queue_in_every_team_namespace_and_priorities(
    compiled_example: Compiled,
) -> None:
    for namespace, queue in [
        ("ml-research", "ml-research"),
        ("llm-serving", "llm-serving"),
        ("llm-serving-canary", "llm-serving"),
        ("data-science", "data-science"),
    ]:
        local = load(compiled_example, f"{EAST}/{namespace}/localqueue_default.yaml")
        assert local["spec"] == {"clusterQueue": queue}
    priority = load(compiled_example, f"{EAST}/_cluster/workloadpriorityclass_training.yaml")
    assert priority["value"] == 10000
    assert not any(
        p.startswith("clusters/prod-west/") and "kueue" in p for p in compiled_example.tree
    )


def test_configuration_fragment_maps_each_tier_and_is_not_synced(
    compiled_example: Compiled,
) -> None:
    path = f"{EAST}/kueue-config/configuration.yaml"
    config = load(compiled_example, path)
    assert config["apiVersion"] == "config.kueue.x-k8s.io/v1beta2"
    # Kueue 0.18 exits on its old DRA gate name, 0.19 has none: DRA accounting is on by default
    assert "featureGates" not in config
    # a GPU job without a queue label goes to its namespace's default queue, never around it
    assert config["manageJobsWithoutQueueName"] is True
    assert config["managedJobsNamespaceSelector"] == {
        "matchLabels": {"app.kubernetes.io/managed-by": "gpufleet"},
        "matchExpressions": [{"key": "gpufleet.dev/team", "operator": "Exists"}],
    }
    assert {
        m["name"]: m["deviceClassNames"] for m in config["resources"]["deviceClassMappings"]
    } == {
        f"gpufleet.dev/{tier}": [tier]
        for tier in ("general", "inference", "large-memory", "training")
    }
    listed = load(compiled_example, f"{EAST}/kustomization.yaml")["resources"]
    assert not any(r.startswith(("kueue-config/", "node-config/")) for r in listed)


def test_the_self_check_catches_quotas_beyond_usable_devices(compiled_example: Compiled) -> None:
    east = compiled_example.fleet.clusters[0]
    plan = compiled_example.plans[0]
    assert overcommitted(east, plan) == []
    # the same quotas against a plan where 13 inference devices are idle (tainted for all)
    shrunk = dataclasses.replace(
        plan,
        tiers=tuple(
            dataclasses.replace(t, idle=t.idle + 13) if t.tier == "inference" else t
            for t in plan.tiers
        ),
    )
    (problem,) = overcommitted(east, shrunk)
    assert problem == "tiers inference: nominal quotas add up to 64 devices, 51 usable"


def test_the_cohort_lends_only_untainted_devices_no_guarantee_needs(
    compiled_example: Compiled,
) -> None:
    """prod-east's burn-in node h100-15 serves only ml-research: it is whole (its slices would
    serve nobody), its GPUs are not lent, and inference counts no slice of it."""
    root = load(compiled_example, f"{EAST}/_cluster/cohort_prod-east.yaml")
    tiers = {t.tier: t for t in compiled_example.plans[0].tiers}
    lent = {
        flavor: int(q["nominalQuota"])
        for (flavor, _), q in quotas(root).items()
        if flavor != HOST_FLAVOR
    }
    assert lent["inference"] == tiers["inference"].usable - tiers["inference"].guaranteed == 12
    assert tiers["training"].tainted == 8
    assert lent["training"] == tiers["training"].untainted - (64 - 8)
    labels = compiled_example.tree[f"{EAST}/node-config/nodelabels_mig-config.yaml"]
    assert "prod-east-h100-15: all-disabled" in labels
