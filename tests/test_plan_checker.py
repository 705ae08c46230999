"""The independent plan checker (tests/plan_checker.py): the example's written plans hold, every
kind of broken plan is caught, and its MIG tables agree with the catalog's layouts (two
independent readings of NVIDIA's placement rules) and with facts checked by hand."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from typing import Any

import pytest

from compiler.catalog import enumerate_layouts, load_catalog
from compiler.load import load_policies
from compiler.model import build_policies
from compiler.pipeline import Compiled
from tests.conftest import EXAMPLE, REPO
from tests.oracle_gpus import GPUS, gpu
from tests.oracle_mig import fits, layouts
from tests.oracle_policy import Inventory, read_cluster
from tests.plan_checker import check_plan, check_written_plans


@cache
def example(cluster: str) -> Inventory:
    """The oracle's reading of one cluster of the example fleet."""
    return read_cluster(build_policies(load_policies(EXAMPLE)), cluster)


def test_the_committed_plans_hold() -> None:
    assert check_written_plans(EXAMPLE, REPO / "out") == []


def test_the_examples_compiled_plans_hold(compiled_example: Compiled) -> None:
    for cluster in compiled_example.fleet.clusters:
        text = compiled_example.tree[f"plan/{cluster.name}.json"]
        assert check_plan(example(cluster.name), text) == [], cluster.name


def edited(compiled: Compiled, cluster: str, change: Callable[[dict[str, Any]], None]) -> list[str]:
    document = json.loads(compiled.tree[f"plan/{cluster}.json"])
    change(document)
    return check_plan(example(cluster), json.dumps(document))


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


def test_a_mig_layout_on_a_pool_without_mig_is_caught(compiled_example: Compiled) -> None:
    """prod-east's h200 pool says nothing of `mig`: disabled, its GPUs run whole."""

    def partition(document: dict[str, Any]) -> None:
        document["migConfigs"]["h200-split"] = ["7x1g.18gb"]
        document["nodeConfigs"]["h200"][0][0] = "h200-split"

    problems = edited(compiled_example, "prod-east", partition)
    assert any("pool h200 node 0: GPU 0 cannot run MIG layout" in p for p in problems)


def test_different_layouts_on_a_node_of_an_allowed_pool_are_caught(
    compiled_example: Compiled,
) -> None:
    """`mig: allowed` gives every GPU of a node one layout; only `mixed` lets them differ."""

    def differ(document: dict[str, Any]) -> None:
        document["migConfigs"]["all-2x3g.40gb"] = ["2x3g.40gb"] * 7 + ["whole"]

    problems = edited(compiled_example, "prod-east", differ)
    assert any("GPUs of a `mig: allowed` pool differ" in p for p in problems)


def test_a_gang_across_pcie_roots_is_caught(compiled_example: Compiled) -> None:
    """data-science's gangs of 2 L40S are matched on pcieRoot: 2 GPUs per root there."""

    def split(document: dict[str, Any]) -> None:
        gangs = first_gangs(document, "l40s", GENERAL)
        gangs[GENERAL] = "gpu-1,gpu-2 gpu-0,gpu-3"

    problems = edited(compiled_example, "prod-east", split)
    assert any("spans resource.kubernetes.io/pcieRoot groups of 2" in p for p in problems)


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


def test_host_shares_beyond_a_node_are_caught(compiled_example: Compiled) -> None:
    """An l40s node of prod-east has 512Gi less 16Gi + 8Gi reserved and 1Gi for eviction:
    five 96Gi shares of `general` (480Gi) fit, and its 4 GPUs hold four; 64 CPUs less 6
    reserved hold four 12-CPU shares, not five. Give one node's gangs a fifth device."""

    def crowd(document: dict[str, Any]) -> None:
        gangs = first_gangs(document, "l40s", GENERAL)
        gangs[GENERAL] = "gpu-0,gpu-1 gpu-2,gpu-3 gpu-4,gpu-5"

    problems = edited(compiled_example, "prod-east", crowd)
    assert any("host shares" in p and "exceed" in p for p in problems), problems
    assert any("no GPU 4" in p for p in problems)


def test_a_plan_of_too_few_nodes_is_caught(compiled_example: Compiled) -> None:
    def shrink(document: dict[str, Any]) -> None:
        document["nodeConfigs"]["l40s"][-1][1] -= 1

    problems = edited(compiled_example, "prod-east", shrink)
    assert any("pool l40s: 7 labelled and 8 placed nodes, not 8" in p for p in problems)


def test_a_wrong_tier_capacity_is_caught(compiled_example: Compiled) -> None:
    def inflate(document: dict[str, Any]) -> None:
        document["tiers"]["general"]["capacity"] += 1

    problems = edited(compiled_example, "prod-east", inflate)
    assert "tier general: capacity 33, devices 32" in problems


@pytest.mark.parametrize("model_id", ["A100-40GB", "A100-80GB", "H100-80GB", "H200", "B200", "A30"])
def test_the_mig_tables_agree_with_the_catalogs_layouts(model_id: str) -> None:
    """Two independent readings of the placement rules yield the same layouts."""
    model = load_catalog().lookup(model_id)
    mine = gpu(model_id)
    assert model is not None and mine is not None
    assert {layout.counts for layout in enumerate_layouts(model)} == layouts(mine)


def test_the_models_agree_with_the_catalog() -> None:
    """Product names, architectures, memory and MIG profile names, read twice."""
    catalog = load_catalog()
    for mine in GPUS:
        model = catalog.lookup(mine.id)
        assert model is not None, mine.id
        assert (mine.product_name, mine.architecture, mine.memory_mib) == (
            model.product_name,
            model.architecture,
            model.memory_mib,
        )
        profiles = {p.name for p in model.mig.profiles} if model.mig else set()
        assert {p.name for p in mine.profiles} == profiles, mine.id


@pytest.mark.parametrize(
    ("model_id", "layout", "fit"),
    [
        ("H100-80GB", {"3g.40gb": 2}, True),
        ("H100-80GB", {"4g.40gb": 1, "3g.40gb": 1}, True),
        ("H100-80GB", {"4g.40gb": 1, "3g.40gb": 1, "1g.10gb": 1}, False),  # 8 compute slices
        ("H100-80GB", {"1g.10gb": 7}, True),
        ("H100-80GB", {"1g.10gb": 8}, False),  # 1g starts at slices 0-6 only
        ("H100-80GB", {"1g.20gb": 4}, True),
        ("H100-80GB", {"1g.20gb": 4, "1g.10gb": 1}, False),  # every memory slice is taken
        ("H100-80GB", {"2g.20gb": 3, "1g.10gb": 1}, True),
        ("H100-80GB", {"1g.10gb+me": 2}, False),  # one +me per GPU
        ("H100-80GB", {"7g.80gb": 1}, True),
        ("H100-80GB", {"3g.40gb": 1, "2g.20gb": 2}, True),
        ("H100-80GB", {"4g.40gb": 1, "2g.20gb": 2}, False),  # 2g starts at 0, 2, 4 only
        ("H200", {"3g.71gb": 1, "1g.35gb": 2}, True),
        ("A30", {"2g.12gb": 2}, True),
        ("A30", {"4g.24gb": 1, "1g.6gb": 1}, False),
        ("A30", {"1g.6gb": 4}, True),
        ("L40S", {"1g.10gb": 1}, False),  # no MIG
    ],
)
def test_the_mig_tables_hold_facts_checked_by_hand(
    model_id: str, layout: dict[str, int], fit: bool
) -> None:
    model = gpu(model_id)
    assert model is not None
    assert fits(model, layout) is fit
