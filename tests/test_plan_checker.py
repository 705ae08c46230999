"""The independent plan checker (tests/plan_checker.py): the example's written plans hold, and
every kind of broken plan is caught; its MIG rules agree with the catalog's layouts."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from compiler.catalog import enumerate_layouts, load_catalog
from compiler.catalog.mig_layouts import MigLayout
from compiler.pipeline import Compiled
from compiler.resolve import ResolvedCluster
from tests.plan_checker import check_plan, layout_fits


def cluster_of(compiled: Compiled, name: str) -> ResolvedCluster:
    return next(c for c in compiled.fleet.clusters if c.name == name)


def test_the_examples_written_plans_hold(compiled_example: Compiled) -> None:
    for cluster in compiled_example.fleet.clusters:
        text = compiled_example.tree[f"plan/{cluster.name}.json"]
        assert check_plan(cluster, text) == [], cluster.name


def edited(compiled: Compiled, cluster: str, change: Any) -> list[str]:
    document = json.loads(compiled.tree[f"plan/{cluster}.json"])
    change(document)
    return check_plan(cluster_of(compiled, cluster), json.dumps(document))


def first_gangs(document: dict[str, Any], pool: str, key: str) -> dict[str, str]:
    return next(gangs for gangs, _ in document["placements"][pool] if key in gangs)


TRAINING = "ml-research/ml-research/training"
INFERENCE = "llm-serving/llm-serving/inference"
GENERAL = "data-science/data-science/general"


def test_a_device_serving_two_gangs_is_caught(compiled_example: Compiled) -> None:
    def reuse(document: dict[str, Any]) -> None:
        gangs = first_gangs(document, "h100", INFERENCE)
        first = gangs[INFERENCE].split()[0]
        gangs[INFERENCE] = " ".join([first, first, *gangs[INFERENCE].split()[2:]])

    assert any("serves two gangs" in p for p in edited(compiled_example, "prod-east", reuse))


def test_an_unserved_guarantee_is_caught(compiled_example: Compiled) -> None:
    def drop(document: dict[str, Any]) -> None:
        gangs = first_gangs(document, "h200", TRAINING)
        del gangs[TRAINING]

    problems = edited(compiled_example, "prod-east", drop)
    assert any(p.startswith(f"guarantee {TRAINING}: ") and "not 64" in p for p in problems)


def test_an_impossible_mig_layout_is_caught(compiled_example: Compiled) -> None:
    def overfill(document: dict[str, Any]) -> None:
        document["migConfigs"]["all-2x3g.40gb"] = ["3x3g.40gb"]

    assert any(
        "cannot run MIG layout" in p for p in edited(compiled_example, "prod-east", overfill)
    )


def test_a_gang_across_pcie_roots_is_caught(compiled_example: Compiled) -> None:
    """data-science's gangs of 2 L40S are matched on pcieRoot: 2 GPUs per root there."""

    def split(document: dict[str, Any]) -> None:
        gangs = first_gangs(document, "l40s", GENERAL)
        gangs[GENERAL] = "gpu-1,gpu-2 gpu-0,gpu-3"

    problems = edited(compiled_example, "prod-east", split)
    assert any("spans pcieRoot groups of 2" in p for p in problems)


def test_a_tainted_device_given_to_an_intolerant_team_is_caught(
    compiled_example: Compiled,
) -> None:
    """Node 15 of prod-east's h100 pool is in burn-in, which only ml-research tolerates."""

    def swap(document: dict[str, Any]) -> None:
        runs = document["placements"]["h100"]
        tainted = runs[-1][0]  # the last node, 15
        assert TRAINING in tainted and runs[-1][1] == 1
        devices = tainted.pop(TRAINING).replace(",", " ")  # gpu-ops's gangs are single GPUs
        runs[-1][0] = {"gpu-ops/gpu-ops/training": devices}

    problems = edited(compiled_example, "prod-east", swap)
    assert any("gpu-ops/gpu-ops/training does not tolerate" in p for p in problems)


def test_a_partitioned_gpu_given_out_whole_is_caught(compiled_example: Compiled) -> None:
    def whole(document: dict[str, Any]) -> None:
        gangs = first_gangs(document, "h100", INFERENCE)
        devices = gangs[INFERENCE].split()
        gangs[INFERENCE] = " ".join(["gpu-7", *devices[1:]])

    problems = edited(compiled_example, "prod-east", whole)
    assert any("is partitioned" in p or "uses h100/gpu" in p for p in problems)


@pytest.mark.parametrize("model_id", ["A100-40GB", "H100-80GB", "H200", "B200", "A30"])
def test_the_checkers_mig_rules_agree_with_the_catalogs_layouts(model_id: str) -> None:
    """Two independent readings of the placement rules: every layout the catalog enumerates
    fits by the checker's rules, and adding any one instance to one that is maximal in the
    catalog fits by neither."""
    model = load_catalog().lookup(model_id)
    assert model is not None and model.mig is not None
    valid = set(enumerate_layouts(model))
    names = [p.name for p in model.mig.profiles]
    for layout in valid:
        counts = dict(layout.counts)
        assert layout_fits(model, counts), layout.name
        for extra in names:
            grown = Counter(counts)
            grown[extra] += 1
            candidate = MigLayout(tuple(sorted(grown.items())))
            assert layout_fits(model, dict(grown)) == (candidate in valid), candidate.name
