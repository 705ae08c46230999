"""`gpufleet diff` and `gpufleet report` open with what can hurt, from real policy changes
(a copy of the example edited, compiled before and after); renamed files and a missing out/
are shown as what they are; the report draws capacity before and after (issue 18, part 1).

Expected values come from the policies (the grant's numbers), from out/ as written (the
node labels, the objects' metadata) or from the policy model, never from the report itself.
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from compiler.pipeline import Compiled, compile_policies
from compiler.report.diff import FileChange
from compiler.report.hurt import NOTHING_HURTS, SHOWN, Harm, Hurt, objects_deleted
from compiler.report.previous import read_previous_steering
from compiler.report.renames import detect_renames
from tests.mermaid_xychart import mermaid_blocks, parse_xychart
from tests.test_cli import Run


@pytest.fixture
def repo(example_repo: Path) -> Path:
    """The example repository (conftest.example_repo)."""
    return example_repo


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new))


def hurt_bullets(report: str) -> list[str]:
    section = report.split("## What can hurt\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("- ")]


def grant_quota(repo: Path, team: str, tier: str) -> tuple[int, int, list[str]]:
    """(guaranteed, limit, clusters) of a grant's quota, read from the policy file."""
    spec = yaml.safe_load((repo / "policies" / "grants" / f"{team}.yaml").read_text())["spec"]
    (quota,) = [q for q in spec["quotas"] if q["tier"] == tier]
    return quota["guaranteed"], quota["limit"], spec["clusters"]


def report_and_diff(run_cli: Run) -> tuple[str, str]:
    code, report, err = run_cli("report", "--previous", "out")
    assert code == 0, err
    code, diff, err = run_cli("diff")
    assert code == 0, err
    return report, diff


def test_guarantees_that_drop_and_quotas_that_shrink(repo: Path, run_cli: Run) -> None:
    grant = repo / "policies" / "grants" / "ml-research.yaml"
    old_guaranteed, old_limit, clusters = grant_quota(repo, "ml-research", "training")
    edit(
        grant,
        "{tier: training, guaranteed: 64, limit: 96}",
        "{tier: training, guaranteed: 40, limit: 80}",
    )
    new_guaranteed, new_limit, _ = grant_quota(repo, "ml-research", "training")
    report, diff = report_and_diff(run_cli)
    where = "team ml-research in namespace ml-research, tier training"
    drop, shrink = old_guaranteed - new_guaranteed, old_limit - new_limit
    expected = [
        f"- **{cluster}**: guarantee of {where}: "
        f"{old_guaranteed} -> {new_guaranteed} devices (-{drop})"
        for cluster in sorted(clusters)
    ] + [
        f"- **{cluster}**: quota of {where}: {old_limit} -> {new_limit} devices (-{shrink})"
        for cluster in sorted(clusters)
    ]
    assert hurt_bullets(report) == expected
    assert report.index("## What can hurt") < report.index("Per tier:")
    diff_lines = diff.splitlines()
    assert diff_lines[0] == "# What can hurt, most severe first:"
    assert diff_lines[1 : 1 + len(expected)] == [
        "#   " + b.removeprefix("- **").replace("**:", ":", 1) for b in expected
    ]


def test_a_team_leaving_leaves_its_namespace_and_deletes_its_objects(
    repo: Path, run_cli: Run
) -> None:
    for part in ("teams", "grants"):
        (repo / "policies" / part / "vision.yaml").unlink()
    namespaced: set[str] = set()
    for path in (repo / "out" / "clusters" / "prod-west").rglob("*.yaml"):
        document = yaml.safe_load(path.read_text())
        metadata = document.get("metadata", {}) if isinstance(document, dict) else {}
        if metadata.get("namespace") == "vision":
            namespaced.add(f"{document['kind']} vision/{metadata['name']}")
    assert len(namespaced) >= 5
    report, diff = report_and_diff(run_cli)
    bullets = hurt_bullets(report)
    leaving = [b for b in bullets if "leaves gpufleet's management" in b]
    assert leaving == [b for b in bullets if b.startswith("- **prod-west**: namespace vision ")]
    assert len(leaving) == 1
    deleted = {b.split("deleted: ", 1)[1] for b in bullets if ": deleted: " in b}
    # the Namespace itself is kept by Argo CD (Prune=false): it leaves management instead
    assert deleted == namespaced
    assert bullets.index(leaving[0]) < min(i for i, b in enumerate(bullets) if ": deleted: " in b)
    assert "#   prod-west: deleted: ResourceQuota vision/gpufleet-devices" in diff


def mig_labels(out: Path) -> dict[str, dict[str, str]]:
    """Per cluster, the nvidia.com/mig.config label of every node, as out/ lists them."""
    return {
        path.parts[-3]: yaml.safe_load(path.read_text())["nodes"]
        for path in sorted(out.glob("clusters/*/node-config/nodelabels_mig-config.yaml"))
    }


def test_nodes_to_drain_are_counted_and_named(repo: Path, run_cli: Run) -> None:
    edit(
        repo / "policies" / "grants" / "llm-serving.yaml",
        "guaranteed: 52, limit: 72",
        "guaranteed: 68, limit: 88",
    )
    edit(
        repo / "policies" / "teams" / "llm-serving.yaml",
        "guaranteed: 48\n      limit: 64",
        "guaranteed: 64\n      limit: 80",
    )
    shutil.copytree(repo / "out", repo / "out-new")
    code, _, err = run_cli("compile", "--out", "out-new")
    assert code == 0, err
    before, after = mig_labels(repo / "out"), mig_labels(repo / "out-new")
    moved = {
        cluster: sorted(
            node
            for node, label in labels.items()
            if before[cluster].get(node, "all-disabled") != label
        )
        for cluster, labels in after.items()
    }
    assert any(moved.values())
    report, diff = report_and_diff(run_cli)
    drains = [b for b in hurt_bullets(report) if "must be drained" in b]
    named: dict[str, list[str]] = {}
    for bullet in drains:
        match = re.fullmatch(
            r"- \*\*([\w-]+)\*\*: pool [\w-]+: (\d+) nodes? \(\d+ GPUs\) "
            r"must be drained to re-partition MIG \(.*\): (.*)",
            bullet,
        )
        assert match, bullet
        nodes = match.group(3).split(", ")
        assert int(match.group(2)) == len(nodes)
        named.setdefault(match.group(1), []).extend(nodes)
    assert {c: sorted(n) for c, n in named.items()} == {c: n for c, n in moved.items() if n}
    assert hurt_bullets(report)[: len(drains)] == drains, "drains come first"
    assert f"#   {drains[0].removeprefix('- **').replace('**:', ':', 1)}" in diff


def test_nothing_hurts_when_nothing_changes(repo: Path, run_cli: Run) -> None:
    code, report, err = run_cli("report", "--previous", "out")
    assert code == 0, err
    assert hurt_bullets(report) == []
    assert f"## What can hurt\n\n{NOTHING_HURTS}\n" in report
    edit(repo / "policies" / "grants" / "ml-research.yaml", "limit: 96", "limit: 100")
    code, diff, err = run_cli("diff")
    assert code == 0, err
    assert diff.splitlines()[0] == f"# {NOTHING_HURTS}"


def _git_apply(directory: Path, patch: str) -> None:
    subprocess.run(["git", "init", "-q"], cwd=directory, check=True)
    applied = subprocess.run(
        ["git", "apply", "-"], cwd=directory, input=patch, text=True, capture_output=True
    )
    assert applied.returncode == 0, applied.stderr
    shutil.rmtree(directory / ".git")


def _files(directory: Path) -> dict[str, bytes]:
    return {
        p.relative_to(directory).as_posix(): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def _rename_cluster(policies: Path) -> None:
    for path in policies.rglob("*.yaml"):
        path.write_text(path.read_text().replace("prod-west", "prod-north"))
    (policies / "clusters" / "prod-west.yaml").rename(policies / "clusters" / "prod-north.yaml")


def _rename_namespace(policies: Path) -> None:
    edit(policies / "grants" / "vision.yaml", "namespaces: [vision]", "namespaces: [vision-lab]")


@pytest.mark.parametrize(
    ("move", "old", "new"),
    [
        (_rename_cluster, "prod-west", "prod-north"),
        (_rename_namespace, "vision", "vision-lab"),
    ],
)
def test_renamed_files_are_shown_as_moves_git_applies(
    repo: Path, run_cli: Run, move: object, old: str, new: str
) -> None:
    """A file moves where the renamed thing names it (`old` in its path becomes `new`)."""
    assert callable(move)
    move(repo / "policies")
    code, diff, err = run_cli("diff")
    assert code == 0, err
    renames = re.findall(r"^rename from (.+)\nrename to (.+)$", diff, re.MULTILINE)
    assert renames and all(b == a.replace(old, new) for a, b in renames)
    moved_before = {p for p in _files(repo / "out") if old in p}
    assert len(renames) >= len(moved_before) // 2
    assert re.search(r"^# [\w-]+: renamed .+ \(from .*" + re.escape(old), diff, re.MULTILINE)
    # applied to the old out/, the diff gives exactly what a compile writes
    shutil.copytree(repo / "out", repo / "applied")
    _git_apply(repo / "applied", diff)
    code, _, err = run_cli("compile")
    assert code == 0, err
    assert _files(repo / "applied") == _files(repo / "out")


def test_renamed_files_are_listed_in_the_report(repo: Path, run_cli: Run) -> None:
    _rename_namespace(repo / "policies")
    code, report, err = run_cli("report", "--previous", "out")
    assert code == 0, err
    files = report.split("## Files\n", 1)[1].split("\n## ", 1)[0]
    quota = "resourcequota_gpufleet-devices.yaml"
    line = f"- `clusters/prod-west/vision/{quota}` -> `clusters/prod-west/vision-lab/{quota}`"
    assert line in files.splitlines()
    assert re.search(r"^- prod-west: .*\d+ renamed", files, re.MULTILINE)


@pytest.mark.parametrize("previous", [None, "nowhere"])
def test_a_missing_out_is_all_new_and_hurts_nothing(
    repo: Path, run_cli: Run, previous: str | None
) -> None:
    shutil.rmtree(repo / "out")
    args = ["report"] + (["--previous", previous] if previous else [])
    code, report, err = run_cli(*args)
    assert code == 0, err
    base = previous or "out"
    assert f"Nothing can hurt that a plan would show: no previous plan in `{base}/plan`." in report
    assert hurt_bullets(report) == []
    compiled = compile_policies(repo / "policies")
    per_cluster = {c.name: 0 for c in compiled.fleet.clusters}
    for path in compiled.tree:
        parts = path.split("/")
        if parts[0] == "clusters":
            per_cluster[parts[1]] += 1
        elif parts[0] == "plan":
            per_cluster[parts[1].removesuffix(".json")] += 1
    files = report.split("## Files\n", 1)[1].split("\n## ", 1)[0]
    for cluster, count in per_cluster.items():
        assert f"- {cluster}: {count} added" in files.splitlines()
    code, diff, err = run_cli("diff")
    assert code == 0, err
    assert diff.splitlines()[0] == f"# {NOTHING_HURTS}"


def test_capacity_is_charted_before_and_after_and_tabled(repo: Path, run_cli: Run) -> None:
    old = compile_policies(repo / "policies", previous=read_previous_steering(repo / "out")[0])
    edit(
        repo / "policies" / "grants" / "ml-research.yaml",
        "guaranteed: 64, limit: 96",
        "guaranteed: 40, limit: 80",
    )
    new = compile_policies(repo / "policies", previous=read_previous_steering(repo / "out")[0])
    code, report, err = run_cli("report", "--previous", "out")
    assert code == 0, err
    blocks = mermaid_blocks(report)
    assert len(blocks) == len(new.fleet.clusters)
    rows = {
        (cells[0], cells[1]): cells[2:]
        for line in report.split("## Capacity before and after", 1)[1].splitlines()
        if line.startswith("| prod-")
        for cells in [[c.strip() for c in line.strip("|").split("|")]]
    }

    def guaranteed(compiled: Compiled, cluster: str, tier: str) -> int:
        (resolved,) = [c for c in compiled.fleet.clusters if c.name == cluster]
        return sum(g.count for g in resolved.guarantees if g.tier == tier)

    for block, cluster in zip(blocks, sorted(c.name for c in new.fleet.clusters), strict=True):
        chart = parse_xychart(block)
        assert chart.title == f"{cluster}: devices per tier"
        assert chart.orientation == "horizontal" and len(chart.bars) == 3
        palette = chart.init["themeVariables"]["xyChart"]["plotColorPalette"]  # type: ignore[index]
        assert len(str(palette).split(",")) == 3
        totals, lent, promised = chart.bars
        assert all(a >= b >= c >= 0 for a, b, c in zip(totals, lent, promised, strict=True))
        for index, category in enumerate(chart.categories):
            tier, side = category.rsplit(" ", 1)
            compiled = old if side == "before" else new
            assert promised[index] == guaranteed(compiled, cluster, tier), category
            cells = rows[(cluster, tier)]
            column = 0 if side == "before" else -1
            values = [c.split(" -> ")[column] for c in cells]
            assert [int(v) for v in values] == [
                promised[index],
                lent[index] - promised[index],
                totals[index] - lent[index],
                int(values[3]),
                totals[index],
            ]
    assert rows[("prod-east", "training")][0] == "64 -> 40"


def test_renames_pair_the_most_alike_files_whatever_the_order() -> None:
    body = "".join(f"line {i}\n" for i in range(10))
    changes = [
        FileChange("c/a/x.yaml", "removed", body, ""),
        FileChange("c/b/x.yaml", "added", "", body.replace("line 3", "LINE 3")),
        FileChange("c/e/x.yaml", "added", "", body.replace("line 3", "L3").replace("line 4", "L4")),
        FileChange("c/a/y.yaml", "removed", "one\ntwo\n", ""),
        FileChange("c/b/y.yaml", "added", "", "three\nfour\n"),
        FileChange("d/a/z.yaml", "removed", body, ""),
        FileChange("d/b/c/z.yaml", "added", "", body),
    ]
    expected = detect_renames(changes)
    for seed in range(5):
        shuffled = list(changes)
        random.Random(seed).shuffle(shuffled)
        assert detect_renames(shuffled) == expected
    by_path = {c.path: c for c in expected}
    assert by_path["c/b/x.yaml"].status == "renamed"
    assert by_path["c/b/x.yaml"].moved_from == "c/a/x.yaml"
    assert by_path["c/e/x.yaml"].status == "added"
    # unlike contents, or paths that differ in more than one component, stay apart
    assert [by_path[p].status for p in ("c/a/y.yaml", "c/b/y.yaml")] == ["removed", "added"]
    assert [by_path[p].status for p in ("d/a/z.yaml", "d/b/c/z.yaml")] == ["removed", "added"]
    assert "c/a/x.yaml" not in by_path


def test_deleted_objects_are_those_synced_before_and_not_after() -> None:
    def quota(name: str) -> str:
        return f"apiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: {name}, namespace: a}}\n"

    kept = (
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n  annotations:\n"
        '    argocd.argoproj.io/sync-options: "Delete=false,Prune=false"\n'
    )
    names = [f"q{i:02}" for i in range(SHOWN + 3)]
    listed = [f"a/resourcequota_{n}.yaml" for n in names]
    old_listing = yaml.safe_dump({"resources": ["_cluster/namespace_a.yaml", *listed]})
    changes = [
        FileChange("clusters/c/kustomization.yaml", "changed", old_listing, "resources: []\n"),
        FileChange("clusters/c/_cluster/namespace_a.yaml", "removed", kept, ""),
        FileChange("clusters/c/node-config/x.yaml", "removed", quota("not-synced"), ""),
        *(
            FileChange(f"clusters/c/{p}", "removed", quota(n), "")
            for p, n in zip(listed, names, strict=True)
        ),
    ]
    tree = {"clusters/c/kustomization.yaml": "resources: []\n"}
    found = sorted(objects_deleted(changes, tree), key=Hurt.order)
    assert [h.sentence for h in found[:SHOWN]] == [
        f"deleted: ResourceQuota a/{n}" for n in names[:SHOWN]
    ]
    assert found[SHOWN:] == [
        Hurt(
            Harm.DELETED,
            "c",
            1,
            "",
            "and 3 more objects deleted (`gpufleet diff` lists them)",
            True,
        )
    ]
