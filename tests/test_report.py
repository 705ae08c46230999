"""The capacity report, the comparison with a previous plan, MIG drains and the grouped diff."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from compiler.pipeline import Compiled
from compiler.report import Previous, build_report, mig_changes, plan_from_json, render_diff
from compiler.report.compare import percent, plan_changes
from compiler.report.diff import FileChange, group_of, object_label, summary_line
from compiler.report.previous import read_previous_plans
from compiler.solve import ClusterPlan, TierCapacity


def plan(configs: dict[str, dict[str, int]], tiers: tuple[TierCapacity, ...] = ()) -> ClusterPlan:
    return ClusterPlan("c1", configs, {}, tiers)


def test_percent_rounds_half_up_and_survives_zero() -> None:
    assert [percent(1, 3), percent(1, 2), percent(5, 8), percent(0, 0)] == [
        "33%",
        "50%",
        "63%",
        "-",
    ]


def test_mig_changes_count_reconfigured_gpus_and_nodes_to_drain() -> None:
    before = plan({"h100": {"whole": 16}, "l40s": {"whole": 8}})
    after = plan({"h100": {"whole": 12, "2x3g.40gb": 4}, "l40s": {"whole": 8}})
    (change,) = mig_changes(before, after, {"h100": 8, "l40s": 4})
    assert (change.pool, change.gpus, change.nodes) == ("h100", 4, 1)
    nine = plan({"h100": {"whole": 7, "2x3g.40gb": 9}})
    assert mig_changes(before, nine, {"h100": 8})[0].nodes == 2
    assert mig_changes(None, after, {"h100": 8}) == []


def test_gpus_a_previous_plan_did_not_have_start_whole() -> None:
    grown = plan({"h100": {"whole": 24}, "h200": {"whole": 8}})
    assert mig_changes(plan({"h100": {"whole": 16}}), grown, {"h100": 8, "h200": 8}) == []
    new_mig = plan({"h100": {"whole": 16}, "a100": {"7x1g.10gb": 8}})
    (change,) = mig_changes(plan({"h100": {"whole": 16}}), new_mig, {"a100": 8})
    assert (change.pool, change.gpus, change.before) == ("a100", 8, {})


configs = st.dictionaries(
    st.sampled_from(["h100", "a100"]),
    st.dictionaries(st.sampled_from(["whole", "2x3g.40gb", "7x1g.10gb"]), st.integers(1, 64)),
)


@given(configs, configs)
def test_mig_changes_are_bounded_and_vanish_without_a_change(
    old: dict[str, dict[str, int]], new: dict[str, dict[str, int]]
) -> None:
    per_node = {"h100": 8, "a100": 8}
    assert mig_changes(plan(new), plan(new), per_node) == []
    for change in mig_changes(plan(old), plan(new), per_node):
        assert 0 < change.gpus <= sum(new[change.pool].values())
        assert change.nodes == -(-change.gpus // 8)


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


def test_changes_read_as_sentences_a_reviewer_can_check() -> None:
    before = ClusterPlan(
        "c1", {}, {"a/a/training": {"h100/gpu": 8}}, (TierCapacity("training", 50, 44, 60),)
    )
    after = ClusterPlan(
        "c1", {}, {"a/a/training": {"h100/gpu": 48}}, (TierCapacity("training", 50, 48, 60),)
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
    assert "| training | 134 | 64 | 96 | 70 (52%) | 32 |" in text
    assert "| ml-research | training (10000), batch (100) | prod-west | ml-research |" in text


def test_the_report_compared_with_a_previous_plan(compiled_example: Compiled) -> None:
    east = next(p for p in compiled_example.plans if p.cluster == "prod-east")
    shrunk = dataclasses.replace(
        east,
        pool_configs={**east.pool_configs, "h100": {"whole": 128}},
        tiers=tuple(
            dataclasses.replace(t, guaranteed=t.guaranteed - 10) if t.tier == "training" else t
            for t in east.tiers
        ),
    )
    text = build_report(
        compiled_example.fleet, compiled_example.plans, Previous({"prod-east": shrunk}, "base")
    )
    assert "- **prod-east**: tier training: headroom 60% -> 52% (80 -> 70 devices)" in text
    assert "guaranteed 54 -> 64" in text
    assert "pool h100: 26 GPUs change MIG configuration" in text
    assert "drain at least 4 nodes" in text
    assert "| h100 | 4 | 26 | 128 whole | 26 2x3g.40gb, 102 whole |" in text
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
    before = plan({"h100": {"whole": 24}})
    after = plan({"h100": {"whole": 4, "2x3g.40gb": 20}})
    mig = {"c1": mig_changes(before, after, {"h100": 8})}
    text = render_diff(changes, mig, ["out/mine.txt"])
    assert text.splitlines()[:3] == [
        "# c1: 2 changed, 1 added; at least 3 nodes change MIG configuration"
        " (20 GPUs in pool h100)",
        "# fleet: 1 removed",
        "# not gpufleet's, left as it is: out/mine.txt",
    ]
    assert "--- a/clusters/c1/ns/a.yaml\n+++ b/clusters/c1/ns/a.yaml\n" in text
    assert "-v: 1\n+v: 2\n" in text
    assert "--- /dev/null\n+++ b/clusters/c1/ns/b.yaml\n@@ -0,0 +1 @@\n+kind: B\n" in text
    assert "--- a/report.md\n+++ /dev/null\n" in text
    assert summary_line("c2", [], []) == "c2: no change"
