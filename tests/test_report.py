"""The capacity report, the comparison with a previous plan, MIG drains and the grouped diff."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import yaml
from hypothesis import given
from hypothesis import strategies as st

from compiler.cache.fingerprint import fingerprint
from compiler.ir import ClusterPlan, MigConfig, Steering, TierCapacity, percent, run_length
from compiler.pipeline import Compiled
from compiler.report import Previous, build_report, mig_changes, plan_from_json, render_diff
from compiler.report.compare import plan_changes
from compiler.report.diff import FileChange, group_of, object_label, summary_line
from compiler.report.hurt import NOTHING_HURTS
from compiler.report.previous import read_previous_plans, read_previous_steering


def plan(nodes: dict[str, list[str]], tiers: tuple[TierCapacity, ...] = ()) -> ClusterPlan:
    """A plan with the given mig.config label per node of each pool."""
    configs = {label: MigConfig(label, ("whole",)) for labels in nodes.values() for label in labels}
    return ClusterPlan(
        "c1", {p: run_length(labels) for p, labels in nodes.items()}, configs, {}, tiers
    )


def test_percent_rounds_half_up_and_survives_zero() -> None:
    assert [percent(1, 3), percent(1, 2), percent(5, 8), percent(0, 0)] == [
        "33%",
        "50%",
        "63%",
        "-",
    ]


def test_headroom_is_a_share_of_the_usable_devices_rounded_half_up() -> None:
    """The one headroom percentage the report, its comparison and `explain` all print."""
    assert TierCapacity("t", capacity=64, guaranteed=52, limit=72).headroom_share == "19%"
    idle = TierCapacity("t", capacity=64, guaranteed=40, limit=72, tainted=16, idle=16)
    assert (idle.headroom, idle.usable, idle.headroom_share) == (8, 48, "17%")  # not 8/64
    assert TierCapacity("t", capacity=0, guaranteed=0, limit=0).headroom_share == "-"


def test_mig_changes_count_the_nodes_to_drain() -> None:
    before = plan({"h100": ["all-disabled"] * 2, "l40s": ["all-disabled"]})
    after = plan({"h100": ["all-disabled", "all-2x3g.40gb"], "l40s": ["all-disabled"]})
    (change,) = mig_changes(before, after, {"h100": 8, "l40s": 4})
    assert (change.pool, change.gpus, change.nodes) == ("h100", 8, 1)
    assert change.before == {"all-disabled": 2}
    assert change.after == {"all-2x3g.40gb": 1, "all-disabled": 1}
    assert mig_changes(None, after, {"h100": 8}) == []


def test_nodes_a_previous_plan_did_not_have_start_disabled() -> None:
    grown = plan({"h100": ["all-disabled"] * 3, "h200": ["all-disabled"]})
    assert mig_changes(plan({"h100": ["all-disabled"] * 2}), grown, {"h100": 8, "h200": 8}) == []
    new_mig = plan({"h100": ["all-disabled"], "a100": ["all-7x1g.10gb"]})
    (change,) = mig_changes(plan({"h100": ["all-disabled"]}), new_mig, {"a100": 8})
    assert (change.pool, change.nodes, change.before) == ("a100", 1, {})


labels = st.lists(
    st.sampled_from(["all-disabled", "all-2x3g.40gb", "all-7x1g.10gb"]), min_size=1, max_size=6
)


@given(labels, labels)
def test_mig_changes_count_exactly_the_nodes_whose_label_differs(
    old: list[str], new: list[str]
) -> None:
    assert mig_changes(plan({"h100": new}), plan({"h100": new}), {"h100": 8}) == []
    padded = old + ["all-disabled"] * max(0, len(new) - len(old))
    differing = sum(1 for a, b in zip(padded, new, strict=False) if a != b)
    changes = mig_changes(plan({"h100": old}), plan({"h100": new}), {"h100": 8})
    assert sum(c.nodes for c in changes) == differing
    assert all(c.gpus == 8 * c.nodes for c in changes)


def test_plans_read_back_as_written(compiled_example: Compiled, tmp_path: Path) -> None:
    for written in compiled_example.plans:
        assert plan_from_json(written.to_json()) == dataclasses.replace(
            written, tiers=tuple(sorted(written.tiers, key=lambda t: t.tier))
        )
    (tmp_path / "plan").mkdir()
    (tmp_path / "plan" / "c1.json").write_text(compiled_example.plans[0].to_json())
    (tmp_path / "plan" / "c2.json").write_text('{"cluster": "c2",\n  "tiers": [}')
    plans, problems = read_previous_plans(tmp_path)
    assert list(plans) == [compiled_example.plans[0].cluster]
    (problem,) = problems
    assert problem.code == "GF504" and problem.span is not None
    assert (problem.span.file.endswith("plan/c2.json"), problem.span.line) == (True, 2)


def test_what_steers_of_each_plan_reads_alone(compiled_example: Compiled, tmp_path: Path) -> None:
    (tmp_path / "plan").mkdir()
    for written in compiled_example.plans:
        (tmp_path / "plan" / f"{written.cluster}.json").write_text(written.to_json())
    plans, _ = read_previous_plans(tmp_path)
    steering, problems = read_previous_steering(tmp_path)
    assert not problems
    assert steering == {name: plan.steering for name, plan in plans.items()}
    assert any(written.node_names for written in compiled_example.plans)
    for written in compiled_example.plans:
        for pool, names in written.node_names.items():
            assert [steering[written.cluster].label_of(pool, 0, name) for name in names] == (
                written.labels(pool)
            )
    # what is not read cannot stop it: a plan whose report parts no longer parse steers
    (tmp_path / "plan" / "c9.json").write_text(
        '{"cluster": "c9", "nodeConfigs": {"p": [["all-disabled", 2]]}, "tiers": 7}'
    )
    assert read_previous_steering(tmp_path)[0]["c9"] == Steering(
        "c9", {"p": [("all-disabled", 2)]}, {}
    )
    assert read_previous_plans(tmp_path)[1][0].code == "GF504"
    # and a plan without what steers is refused alike
    (tmp_path / "plan" / "c9.json").write_text('{"cluster": "c9", "tiers": {}}')
    (problem,) = read_previous_steering(tmp_path)[1]
    assert problem.code == "GF504" and "c9.json" in problem.message


def test_a_plan_and_the_plan_read_back_steer_alike_whatever_its_pool_order() -> None:
    written = ClusterPlan(
        "c1",
        {"z-pool": [("all-disabled", 2)], "a-pool": [("all-1g.10gb", 1)]},
        {},
        {},
        (),
        node_names={"z-pool": ("n2", "n1"), "a-pool": ("n0",)},
    )
    read_back = Steering.from_json(written.to_json())
    assert read_back == written.steering
    assert fingerprint(read_back) == fingerprint(written.steering)  # one cache key


def test_diff_warns_of_a_plan_it_cannot_compare_with(
    example_repo: Path, run_cli: Callable[..., tuple[int, str, str]]
) -> None:
    """A plan whose node labels still read but whose guarantees do not: compile keeps the
    labels, and diff, which compares the guarantees, says it cannot (GF504)."""
    plan = example_repo / "out" / "plan" / "prod-east.json"
    document = json.loads(plan.read_text())
    document["tiers"] = 7
    plan.write_text(json.dumps(document))
    code, _, errors = run_cli("diff")
    assert code == 0 and errors.count("GF504") == 1 and "prod-east.json" in errors


def test_changes_read_as_sentences_a_reviewer_can_check() -> None:
    before = ClusterPlan(
        "c1", {}, {}, {"a/a/training": {"h100/gpu": 8}}, (TierCapacity("training", 50, 44, 60),)
    )
    after = ClusterPlan(
        "c1", {}, {}, {"a/a/training": {"h100/gpu": 48}}, (TierCapacity("training", 50, 48, 60),)
    )
    assert plan_changes(before, after) == [
        "tier training: headroom 12% -> 4% (6 -> 2 devices), guaranteed 44 -> 48",
        "guarantee a/a/training: 8 -> 48",
    ]
    assert plan_changes(after, after) == []


def test_the_report_in_out_is_the_report_without_a_comparison(compiled_example: Compiled) -> None:
    text = compiled_example.tree["report.md"]
    assert text == build_report(compiled_example.fleet, compiled_example.plans)
    assert "## What changes" not in text and "## Cluster prod-east" in text
    # prod-east's burn-in node h100-15 (8 GPUs, tolerated by ml-research only) is whole and
    # counted usable; the cohort lends only untainted devices: 120 - (64 - 8 from h100-15)
    assert "| training | 128 | 8 | 128 | 64 | 104 | 64 (50%) | 64 | 40 |" in text
    assert "| ml-research | training (10000), batch (100) | prod-west | ml-research |" in text


def test_the_report_compared_with_a_previous_plan(compiled_example: Compiled) -> None:
    east = next(p for p in compiled_example.plans if p.cluster == "prod-east")
    shrunk = dataclasses.replace(
        east,
        node_configs={**east.node_configs, "h100": [("all-disabled", 16)]},
        tiers=tuple(
            dataclasses.replace(t, guaranteed=t.guaranteed - 10) if t.tier == "training" else t
            for t in east.tiers
        ),
    )
    text = build_report(
        compiled_example.fleet, compiled_example.plans, Previous({"prod-east": shrunk}, "base")
    )
    assert "- **prod-east**: tier training: headroom 58% -> 50% (74 -> 64 devices)" in text
    assert "guaranteed 54 -> 64" in text
    # what can hurt names the nodes to drain: the ones the written node labels partition
    assert (
        "- **prod-east**: pool h100: 4 nodes (32 GPUs) must be drained to re-partition MIG "
        "(16 all-disabled -> 4 all-2x3g.40gb, 12 all-disabled): prod-east-h100-11, "
        "prod-east-h100-12, prod-east-h100-13, prod-east-h100-14\n"
    ) in text
    assert text.index("## What can hurt") < text.index("## What changes")
    assert "| h100 | 8 | 16 | 4 all-2x3g.40gb, 12 all-disabled |" in text
    assert "- **prod-west**: new cluster" in text


def test_files_group_by_cluster_and_name_their_objects() -> None:
    assert group_of("clusters/prod-east/ml-research/resourcequota_x.yaml") == "prod-east"
    assert group_of("plan/prod-west.json") == "prod-west"
    assert [group_of("argocd/cmp/plugin.yaml"), group_of("report.md")] == ["argocd", "fleet"]
    quota = "kind: ResourceQuota\nmetadata: {name: q, namespace: ns}\n"
    assert object_label("clusters/c/ns/resourcequota_q.yaml", quota) == "ResourceQuota ns/q"
    assert object_label("clusters/c/kustomization.yaml", "kind: Kustomization\n") == (
        "Kustomization c"
    )
    assert object_label("clusters/c/x.yaml", "{not: [yaml") == "clusters/c/x.yaml"


def test_the_diff_summarises_each_cluster_then_shows_unified_diffs() -> None:
    changes = [
        FileChange("clusters/c1/ns/a.yaml", "changed", "kind: A\nv: 1\n", "kind: A\nv: 2\n"),
        FileChange("clusters/c1/ns/b.yaml", "added", "", "kind: B\n"),
        FileChange("clusters/c1/ns/c.yaml", "changed", "kind: C\n", "kind: C\nx: 1\n"),
        FileChange("report.md", "removed", "# r\n", ""),
    ]
    before = plan({"h100": ["all-disabled"] * 4})
    after = plan({"h100": ["all-disabled"] + ["all-2x3g.40gb"] * 3})
    mig = {"c1": mig_changes(before, after, {"h100": 8})}
    text = render_diff(changes, mig, ["out/mine.txt"])
    assert text.splitlines()[:3] == [
        "# c1: 2 changed, 1 added; 3 nodes change MIG configuration (h100: 3)",
        "# fleet: 1 removed",
        "# not gpufleet's, left as it is: out/mine.txt",
    ]
    assert "--- a/clusters/c1/ns/a.yaml\n+++ b/clusters/c1/ns/a.yaml\n" in text
    assert "-v: 1\n+v: 2\n" in text
    assert "--- /dev/null\n+++ b/clusters/c1/ns/b.yaml\n@@ -0,0 +1 @@\n+kind: B\n" in text
    assert "--- a/report.md\n+++ /dev/null\n" in text
    assert summary_line("c2", [], []) == "c2: no change"


def test_a_namespace_that_leaves_management_is_said_loudly(compiled_example: Compiled) -> None:
    """Argo CD keeps a namespace the policy drops (Prune=false), with its workloads; nothing of
    gpufleet holds there any more, and the reviewer must know."""
    east = next(p for p in compiled_example.plans if p.cluster == "prod-east")
    before = dataclasses.replace(east, namespaces=(*east.namespaces, "old-team"))
    text = build_report(
        compiled_example.fleet, compiled_example.plans, Previous({"prod-east": before}, "base")
    )
    assert "- **prod-east**: namespace old-team leaves gpufleet's management: Argo CD keeps" in text
    unchanged = build_report(
        compiled_example.fleet, compiled_example.plans, Previous({"prod-east": east}, "base")
    )
    assert "namespace old-team" not in unchanged
    assert NOTHING_HURTS in unchanged
    assert "ml-research" in east.namespaces


def test_argo_cd_never_deletes_a_team_namespace(compiled_example: Compiled) -> None:
    namespaces = [
        yaml.safe_load(text)
        for path, text in compiled_example.tree.items()
        if "/_cluster/namespace_" in path
    ]
    assert namespaces
    for namespace in namespaces:
        options = namespace["metadata"]["annotations"]["argocd.argoproj.io/sync-options"]
        assert set(options.split(",")) == {"Delete=false", "Prune=false"}


def test_the_report_says_which_guarantees_kueue_reserves(compiled_example: Compiled) -> None:
    """Without Kueue a guarantee is only a quota; the reviewer must see which ones."""
    text = compiled_example.tree["report.md"]
    for cluster in compiled_example.fleet.clusters:
        held = "Kueue reserves it" if cluster.cluster.spec.kueue.enabled else "quota only"
        for guarantee in cluster.guarantees:
            if guarantee.count:
                row = (
                    f"| {cluster.name} | {guarantee.namespace} | {guarantee.tier} | "
                    f"{guarantee.count} | {guarantee.limit} | {guarantee.gang} | {held} |"
                )
                assert row in text, row
    assert "is a promise that the devices exist, not a reservation" in text
