"""`gpufleet drift`: each planted difference of the drift dumps (tests/fixtures/inventory/
generate.py, DRIFTS) is found, alone, located in the dump, with the exit code the policy's
numbers call for; hostile input ends in located diagnostics, never a traceback."""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from compiler.cli import main
from compiler.diagnostics import Span
from compiler.diagnostics.codes import DRIFT_EXIT_CODES
from compiler.drift import markdown
from compiler.drift.compare import Drift, compare
from compiler.drift.findings import LiveTaint, lost
from compiler.drift.live import live_cluster
from compiler.drift.markdown import drift_markdown
from compiler.inventory import ClusterDump, read_dump
from compiler.ir import ClusterPlan, ResolvedCluster
from compiler.pipeline import resolve_policies
from compiler.report.previous import read_previous_plans

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "inventory"


@pytest.fixture(scope="module")
def generate() -> Any:
    sys.path.insert(0, str(FIXTURES))
    try:
        import generate as module  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(FIXTURES))
    return module


@pytest.fixture(scope="module")
def dumps(generate: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("drift")
    found = {}
    for name in generate.DRIFTS:
        found[name] = directory / f"{name}.yaml"
        found[name].write_text(generate.drift_dump(name), encoding="utf-8")
    return found


@pytest.fixture(scope="module")
def example() -> tuple[dict[str, ResolvedCluster], dict[str, ClusterPlan]]:
    fleet = resolve_policies(ROOT / "policies")
    plans, problems = read_previous_plans(ROOT / "out")
    assert problems == []
    return {c.name: c for c in fleet.clusters}, plans


def _drift(
    example: tuple[dict[str, ResolvedCluster], dict[str, ClusterPlan]], path: Path, cluster: str
) -> tuple[Drift, ClusterDump]:
    clusters, plans = example
    dump, warnings = read_dump(str(path))
    assert warnings == []
    drift = compare(
        clusters[cluster], plans[cluster], dump, lambda pool: Span("plan.json"), 60.0, 10.0
    )
    return drift, dump


def _run(*words: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(w) for w in words])
    return code, out.getvalue(), err.getvalue()


def _l40s_rows(cluster: ResolvedCluster) -> tuple[int, int, int]:
    """prod-west's tier general: l40s nodes, GPUs per node and what its guarantees ask for."""
    pool = next(p for p in cluster.pools if p.pool.name == "l40s")
    asked = sum(g.count for g in cluster.guarantees if g.tier == "general")
    return pool.pool.nodes, pool.pool.gpus_per_node, asked


# (dump, cluster) -> the findings planted there: (code, node) each, in print order
PLANTED: dict[str, list[tuple[str, str]]] = {
    "prod-east-in-sync": [],
    "prod-east-missing-gpu": [("GF822", "prod-east-l40s-5")],
    "prod-east-extra-node": [("GF823", "prod-east-h100-16")],
    "prod-east-mig-relabelled": [("GF824", "prod-east-h100-11")],
    "prod-east-mig-not-applied": [("GF825", "prod-east-h100-12")],
    "prod-east-xid": [("GF826", "prod-east-h100-3")],
    "prod-east-not-ready": [("GF821", "prod-east-h200-2")],
    "prod-west-in-sync": [],
    "prod-west-missing-node": [("GF820", "sjc2-r15-l40s-02")],
    "prod-west-not-ready": [("GF821", "sjc2-r15-l40s-04")],
    "prod-west-rack-down": [
        ("GF821", "sjc2-r14-l40s-01"),
        ("GF821", "sjc2-r14-l40s-02"),
        ("GF821", "sjc2-r14-l40s-03"),
    ],
}


def _expected_exit(name: str, clusters: dict[str, ResolvedCluster]) -> int:
    """From the policy's numbers: prod-east has capacity to spare in every tier for any one
    node or GPU (general: 32 L40S for 16; inference: 16 H100 nodes, 4 partitioned, for 52
    3g.40gb devices, 2 per GPU; training: 128 + 32 for 64), so its differences keep every
    guarantee. prod-west's tier general is its 6 l40s nodes alone: 24 GPUs for 16 + 4
    guaranteed. A node down leaves 20 (data-science's 8 gangs of 2 on 8 of the 10 PCIe-root
    pairs, vision's 4 on the other 2): it holds. The r14 rack (3 nodes) down leaves 12 < 20."""
    if not PLANTED[name]:
        return 0
    if name.startswith("prod-east"):
        return 1
    nodes, per_node, asked = _l40s_rows(clusters["prod-west"])
    down = len(PLANTED[name])
    return 2 if (nodes - down) * per_node < asked else 1


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_each_planted_difference_is_found_alone_with_its_exit_code(
    name: str,
    dumps: dict[str, Path],
    example: tuple[dict[str, ResolvedCluster], dict[str, ClusterPlan]],
) -> None:
    cluster = name.split("-in-sync")[0] if "in-sync" in name else "-".join(name.split("-")[:2])
    drift, _ = _drift(example, dumps[name], cluster)
    assert [(f.diagnostic.code, f.node) for f in drift.findings] == PLANTED[name]
    expected = _expected_exit(name, example[0])
    assert drift.in_sync == (expected == 0)
    assert drift.breaks_guarantees == (expected == 2)
    if expected == 2:
        assert [d.code for d in drift.diagnostics][-1] == "GF827"
    code, out, err = _run(
        "drift", "--dump", dumps[name], "--cluster", cluster,
        "--policies", ROOT / "policies", "--out", ROOT / "out", "--format", "json",
    )  # fmt: skip
    assert code == expected, err
    document = json.loads(out)
    assert document["summary"]["exitCode"] == expected
    codes = [d["code"] for d in document["diagnostics"]]
    assert codes == [c for c, _ in PLANTED[name]] + (["GF827"] if expected == 2 else [])


def test_findings_are_located_at_the_object_of_the_dump_that_shows_them(
    dumps: dict[str, Path],
    example: tuple[dict[str, ResolvedCluster], dict[str, ClusterPlan]],
) -> None:
    not_ready, dump = _drift(example, dumps["prod-east-not-ready"], "prod-east")
    node = dump.node("prod-east-h200-2")
    assert node is not None and not_ready.findings[0].diagnostic.span == node.span
    missing, dump = _drift(example, dumps["prod-east-missing-gpu"], "prod-east")
    (slice_,) = dump.slices_of("prod-east-l40s-5", "gpu.nvidia.com")
    assert missing.findings[0].diagnostic.span == slice_.span
    assert "gpu-2" in missing.findings[0].diagnostic.message
    xid, dump = _drift(example, dumps["prod-east-xid"], "prod-east")
    (slice_,) = dump.slices_of("prod-east-h100-3", "gpu.nvidia.com")
    device = next(d for d in slice_.devices if d.name == "gpu-6")
    assert xid.findings[0].diagnostic.span == device.span
    assert "XID" in xid.findings[0].diagnostic.message
    # a node the dump lacks is located where the policy declares it
    gone, _ = _drift(example, dumps["prod-west-missing-node"], "prod-west")
    span = gone.findings[0].diagnostic.span
    assert span is not None and span.file.endswith("policies/clusters/prod-west.yaml")
    line = (ROOT / "policies/clusters/prod-west.yaml").read_text().splitlines()[span.line - 1]
    assert line[span.column - 1 :].startswith("sjc2-r15-l40s-02")


def test_a_broken_guarantee_is_explained_as_check_explains_it(
    dumps: dict[str, Path],
    example: tuple[dict[str, ResolvedCluster], dict[str, ClusterPlan]],
) -> None:
    drift, dump = _drift(example, dumps["prod-west-rack-down"], "prod-west")
    (broken,) = drift.diagnostics[-1:]
    assert broken.code == "GF827"
    nodes, per_node, asked = _l40s_rows(example[0]["prod-west"])
    assert "tier general cannot serve these guarantees at once" in broken.message
    # the minimal conflict is data-science's 16 in gangs of 2 against the 3 nodes left
    assert "they ask for 16 devices" in broken.message
    assert f"can serve at most {(nodes - 3) * per_node} of them" in broken.message
    assert broken.span is not None and broken.span.file.endswith("grants/data-science.yaml")
    notes = dict(broken.related)
    down = dump.node("sjc2-r14-l40s-01")
    assert down is not None and down.span in notes.values()
    assert any("not Ready" in text for text in notes)
    assert asked == 20


def test_the_live_cluster_is_built_beside_the_policy(
    example: tuple[dict[str, ResolvedCluster], dict[str, ClusterPlan]],
) -> None:
    cluster = example[0]["prod-west"]
    before = cluster.taints
    span = Span("dump.yaml", 3, 3)
    taints = [lost("l40s", i, None, "not-ready", f"n{i}", span) for i in range(3)]
    taints.append(LiveTaint("b200", 3, 2, "example.com/ecc", "x", "NoSchedule", span, "g"))
    live = live_cluster(cluster, taints)
    assert cluster.taints == before
    added = live.taints[len(before) :]
    # the three nodes are one taint (one solver group); the device taint is its own
    assert [len(t.targets) for t in added] == [3, 1] or [len(t.targets) for t in added] == [1, 3]
    assert all(t.tolerated_by == () for t in added)
    assert all(t.taint.source.span(("spec", "key")) == span for t in added)


def test_markdown_says_the_verdict_and_escapes_what_the_dump_says(
    generate: Any,
    tmp_path: Path,
    dumps: dict[str, Path],
    example: tuple[dict[str, ResolvedCluster], dict[str, ClusterPlan]],
) -> None:
    synced, _ = _drift(example, dumps["prod-east-in-sync"], "prod-east")
    text = drift_markdown(synced, "dump.yaml", "out/plan/prod-east.json")
    assert text.startswith("<!-- gpufleet-drift:prod-east -->\n## Drift: cluster prod-east\n")
    assert "**In sync** (exit 0)" in text
    held, _ = _drift(example, dumps["prod-east-missing-gpu"], "prod-east")
    text = drift_markdown(held, "dump.yaml", "out/plan/prod-east.json")
    assert "every guarantee still holds** (exit 1)" in text
    # general loses the one missing L40S: 32 -> 31 usable (the other tiers keep theirs)
    assert "| general | 32 | 31 | 16 | 15 |" in text
    broken, _ = _drift(example, dumps["prod-west-rack-down"], "prod-west")
    text = drift_markdown(broken, "dump.yaml", "out/plan/prod-west.json")
    assert "**A guarantee no longer holds** (exit 2)" in text
    assert "### Why a guarantee no longer holds" in text
    assert "or add 2 nodes to pool l40s" in text
    # a hostile node name reaches a table cell: no HTML, no extra column
    items = generate.drift_items("prod-east-extra-node")
    for item in items:
        if "prod-east-h100-16" in item["metadata"]["name"]:
            item["metadata"]["name"] = "evil|<img src=x onerror=alert(1)>"
        if item.get("spec", {}).get("nodeName") == "prod-east-h100-16":
            item["spec"]["nodeName"] = "evil|<img src=x onerror=alert(1)>"
    hostile = tmp_path / "hostile.yaml"
    hostile.write_text(generate._listing("kubectl get", items), encoding="utf-8")
    found, _ = _drift(example, hostile, "prod-east")
    text = drift_markdown(found, str(hostile), "plan")
    assert "<img" not in text
    row = next(line for line in text.splitlines() if line.startswith("| GF823"))
    assert row.count(" | ") == 3 and "\\|" in row


def test_a_large_outage_stays_postable(
    generate: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    example: tuple[dict[str, ResolvedCluster], dict[str, ClusterPlan]],
) -> None:
    """Every node of prod-east not Ready: 28 findings listed, the hints once per code; with
    MAX_ROWS lowered, the rest is counted, never listed."""
    items = generate.drift_items("prod-east-in-sync")
    names = [i["metadata"]["name"] for i in items if i["kind"] == "Node"]
    gpu_nodes = [n for n in names if "-cp-" not in n and "-cpu-" not in n]
    generate._not_ready(*gpu_nodes)(items)
    dump = tmp_path / "down.yaml"
    dump.write_text(generate._listing("kubectl get", items), encoding="utf-8")
    drift, _ = _drift(example, dump, "prod-east")
    assert [f.diagnostic.code for f in drift.findings] == ["GF821"] * len(gpu_nodes)
    assert drift.breaks_guarantees
    text = drift_markdown(drift, "dump.yaml", "plan")
    assert text.count("| GF821 ") == len(gpu_nodes)
    (todo,) = [line for line in text.splitlines() if line.startswith("- [GF821]")]
    assert f"drift-node-not-ready ({len(gpu_nodes)})" in todo
    monkeypatch.setattr(markdown, "MAX_ROWS", 5)
    short = drift_markdown(drift, "dump.yaml", "plan")
    assert short.count("| GF821 ") == 5
    assert f"... and {len(gpu_nodes) - 5} more" in short


def test_markdown_format_writes_the_report_on_stdout(
    dumps: dict[str, Path],
) -> None:
    code, out, err = _run(
        "drift", "--dump", dumps["prod-west-rack-down"], "--cluster", "prod-west",
        "--policies", ROOT / "policies", "--out", ROOT / "out", "--format", "markdown",
    )  # fmt: skip
    assert code == 2
    assert out.startswith("<!-- gpufleet-drift:prod-west -->")
    assert "error[GF827]" in err and "a guarantee no longer holds (exit 2)" in err


def test_github_format_annotates_the_dump(dumps: dict[str, Path]) -> None:
    code, _, err = _run(
        "drift", "--dump", dumps["prod-east-xid"], "--cluster", "prod-east",
        "--policies", ROOT / "policies", "--out", ROOT / "out", "--format", "github",
    )  # fmt: skip
    assert code == 1
    assert f"::error file={dumps['prod-east-xid']},line=" in err
    assert "title=GF826 drift-device-taint::" in err


def test_the_committed_fixtures_drift_by_what_they_plant(
    example: tuple[dict[str, ResolvedCluster], dict[str, ClusterPlan]],
) -> None:
    """k137-prod-east: XID 48 on prod-east-h100-3 gpu-6, prod-east-l40s-5 lost gpu-2;
    k134-prod-west: prod-west-b200-7 lost gpu-3, an operator's ECC rule on b200-3 gpu-2
    (generate.py's docstring). Each takes one GPU of a tier with spare capacity."""
    east, _ = _drift(example, FIXTURES / "k137-prod-east.yaml", "prod-east")
    assert sorted((f.diagnostic.code, f.node) for f in east.findings) == [
        ("GF822", "prod-east-l40s-5"),
        ("GF826", "prod-east-h100-3"),
    ]
    assert not east.breaks_guarantees
    west, _ = _drift(example, FIXTURES / "k134-prod-west.yaml", "prod-west")
    assert sorted((f.diagnostic.code, f.node) for f in west.findings) == [
        ("GF822", "prod-west-b200-7"),
        ("GF826", "prod-west-b200-3"),
    ]
    assert not west.breaks_guarantees


@pytest.mark.parametrize(
    ("words", "code", "expected"),
    [
        (["--cluster", "nowhere"], 2, "GF113"),
        (["--cluster", "prod-east", "--out", "{tmp}/empty"], 2, "GF828"),
    ],
)
def test_a_wrong_cluster_or_a_missing_plan_is_a_usage_error(
    words: list[str], code: int, expected: str, dumps: dict[str, Path], tmp_path: Path
) -> None:
    words = [w.replace("{tmp}", str(tmp_path)) for w in words]
    if "--out" not in words:
        words += ["--out", str(ROOT / "out")]
    found, out, _ = _run(
        "drift", "--dump", dumps["prod-east-in-sync"], "--policies", ROOT / "policies",
        "--format", "json", *words,
    )  # fmt: skip
    assert found == code
    assert [d["code"] for d in json.loads(out)["diagnostics"]] == [expected]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("items: [\n", "GF101"),
        ("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node}\n", "GF802"),
        ("- 1\n- 2\n", "GF801"),
    ],
)
def test_a_hostile_dump_is_a_located_error_without_a_traceback(
    text: str, expected: str, tmp_path: Path
) -> None:
    dump = tmp_path / "dump.yaml"
    dump.write_text(text, encoding="utf-8")
    code, out, err = _run(
        "drift", "--dump", dump, "--cluster", "prod-east",
        "--policies", ROOT / "policies", "--out", ROOT / "out", "--format", "json",
    )  # fmt: skip
    assert code == 2, err
    (diagnostic,) = json.loads(out)["diagnostics"]
    assert diagnostic["code"] == expected
    assert diagnostic["location"]["file"] == str(dump)
    assert "Traceback" not in err


def test_help_and_readme_document_the_exit_codes() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main(["drift", "--help"])
    flat = " ".join(out.getvalue().split())
    for code, meaning in DRIFT_EXIT_CODES.items():
        assert f"{code} {meaning}" in flat
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = [line for line in readme.splitlines() if line.startswith("| drift ")]
    assert rows == [f"| drift {code} | {meaning} |" for code, meaning in DRIFT_EXIT_CODES.items()]


def test_the_drift_dumps_differ_from_the_in_sync_one_only_where_planted(generate: Any) -> None:
    """Each copy changes only the objects of the node it plants on (the extra node adds its
    own): nothing else of the in-sync dump moves."""
    for name, (cluster, plant) in generate.DRIFTS.items():
        if plant is None:
            continue
        base = {_key(i): i for i in generate.drift_items(f"{cluster}-in-sync")}
        changed = {_key(i): i for i in generate.drift_items(name)}
        touched = {k for k in base.keys() | changed.keys() if base.get(k) != changed.get(k)}
        nodes = {node for _, node in PLANTED[name]}
        assert touched and {node for _, node in touched} <= nodes, (name, touched)


def _key(item: dict[str, Any]) -> tuple[str, str]:
    node = item.get("spec", {}).get("nodeName") or item["metadata"]["name"]
    return item["kind"], node
