"""`gpufleet inventory import`: pools grouped as the fixtures were designed
(tests/fixtures/inventory/generate.py), the hand-written example files left byte for byte as
they are, comments and unowned fields kept, re-imports idempotent, and the done-when of issue
21: an import of each fixture compiles to the guarantees of the hand-written example."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from fractions import Fraction
from pathlib import Path

import pytest
import yaml

from compiler.catalog import load_catalog
from compiler.catalog.driver import NVIDIA_DRIVER
from compiler.cli import main
from compiler.inventory import read_dump
from compiler.inventory.pools import group_pools

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "inventory"
EAST, WEST, DYNAMIC = (
    FIXTURES / f"{name}.yaml" for name in ("k137-prod-east", "k134-prod-west", "k137-dynamic-mig")
)
TI = 2**40


def _run(*words: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(words))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def policies(tmp_path: Path) -> Path:
    """A copy of the example fleet's policies."""
    shutil.copytree(ROOT / "policies", tmp_path / "policies")
    return tmp_path / "policies"


def _import(policies: Path, dump: Path, cluster: str, *extra: str) -> tuple[int, str, str]:
    return _run(
        "inventory", "import", "--dump", str(dump), "--cluster", cluster,
        "--policies", str(policies), *extra,
    )  # fmt: skip


def _pools(dump: Path) -> dict[str, tuple]:  # type: ignore[type-arg]
    found, _ = group_pools(read_dump(str(dump))[0], load_catalog(), NVIDIA_DRIVER)
    return {
        p.shape.model: (
            len(p.nodes), p.shape.gpus_per_node, p.mig, p.shape.cpu, p.shape.host_memory,
            p.pcie_root,
        )
        for p in found
    }  # fmt: skip


def test_prod_east_groups_into_its_three_pools() -> None:
    # the failed-GPU node prod-east-l40s-5 stays in the L40S pool with 4 GPUs; the MIG nodes
    # and the whole ones are one H100 pool (mig.config set on all: the MIG manager runs)
    assert _pools(EAST) == {
        "H100-80GB": (16, 8, "allowed", 224, 2 * TI, 2),
        "H200": (4, 8, "disabled", 224, 2 * TI, 2),
        "L40S": (8, 4, "disabled", 64, Fraction(TI, 2), 2),
    }


def test_prod_west_groups_from_the_previous_attribute_set() -> None:
    assert _pools(WEST) == {
        "A100-80GB": (8, 8, "allowed", 128, TI, 2),
        "B200": (12, 8, "disabled", 256, 3 * TI, 2),
        "L40S": (6, 4, "disabled", 64, Fraction(TI, 2), 2),
    }


def test_dynamic_mig_nodes_are_a_mixed_pool() -> None:
    assert _pools(DYNAMIC) == {"H100-80GB": (2, 8, "mixed", 224, 2 * TI, 2)}


def test_failed_gpus_and_taints_are_warnings_that_say_where() -> None:
    dump = read_dump(str(EAST))[0]
    _, found = group_pools(dump, load_catalog(), NVIDIA_DRIVER)
    by_code = {code: [d for d in found if d.code == code] for code in ("GF811", "GF812")}
    (missing,) = by_code["GF811"]
    assert "prod-east-l40s-5 publishes 3 of its 4 GPUs (gpu-2)" in missing.message
    xid, burn_in = sorted(by_code["GF812"], key=lambda d: d.message)
    assert "device gpu-6 of node prod-east-h100-3 is tainted gpu.nvidia.com/xid=48" in xid.message
    devices = ", ".join(f"gpu-{i}" for i in range(8))
    assert f"devices {devices} of node prod-east-h100-15 are tainted" in burn_in.message
    (rule,) = dump.taint_rules
    assert burn_in.span == rule.span  # the rule's taint points at the rule
    assert all(d.severity.value == "warning" for d in found)


@pytest.mark.parametrize(("dump", "cluster"), [(EAST, "prod-east"), (WEST, "prod-west")])
def test_importing_the_example_hardware_changes_nothing(
    policies: Path, dump: Path, cluster: str
) -> None:
    before = {p: p.read_bytes() for p in policies.rglob("*.yaml")}
    code, out, err = _import(policies, dump, cluster)
    assert code == 0, err
    assert out.startswith(f"ok: {policies}/clusters/{cluster}.yaml describes the dump")
    assert {p: p.read_bytes() for p in policies.rglob("*.yaml")} == before
    assert _import(policies, dump, cluster, "--check")[0] == 0


def _strip_pools(policies: Path, cluster: str) -> None:
    """Remove the cluster's nodePools (everything else of the file kept as written)."""
    path = policies / "clusters" / f"{cluster}.yaml"
    text = path.read_text()
    start = text.index("  nodePools:\n")
    end = start + len("  nodePools:\n")
    lines = text[end:].split("\n")
    while lines and (lines[0].startswith("    ") or lines[0].startswith("  #")):
        lines.pop(0)
    path.write_text(text[:start] + "\n".join(lines))


def _plans(out: Path, cluster: str) -> dict:  # type: ignore[type-arg]
    plan = json.loads((out / "plan" / f"{cluster}.json").read_text())
    return {key: plan[key] for key in ("assignments", "limits", "tiers")}


def test_an_import_compiles_to_the_guarantees_of_the_hand_written_example(
    policies: Path, tmp_path: Path
) -> None:
    for cluster in ("prod-east", "prod-west"):
        _strip_pools(policies, cluster)
        assert "nodePools" not in (policies / "clusters" / f"{cluster}.yaml").read_text()
    assert _import(policies, EAST, "prod-east")[0] == 0
    assert _import(policies, WEST, "prod-west")[0] == 0
    out = tmp_path / "out"
    code, _, err = _run("compile", "--policies", str(policies), "--out", str(out), "--no-cache")
    assert code == 0, err
    for cluster in ("prod-east", "prod-west"):
        assert _plans(out, cluster) == _plans(ROOT / "out", cluster), cluster


def test_a_new_cluster_file_has_the_modeline_and_a_second_import_changes_nothing(
    policies: Path,
) -> None:
    code, out, _ = _import(policies, DYNAMIC, "lab")
    assert code == 0 and out.startswith(f"wrote {policies}/clusters/lab.yaml")
    written = (policies / "clusters" / "lab.yaml").read_text()
    assert written.split("\n")[0] == "# yaml-language-server: $schema=../../docs/policy.schema.json"
    (document,) = yaml.safe_load_all(written)
    assert document["spec"]["kubernetesVersion"] == "1.37"
    assert "driverVersion" not in document["spec"]  # the current release's attribute set
    assert document["spec"]["nodePools"] == [
        {"name": "h100", "nodes": 2, "gpu": "H100-80GB", "gpusPerNode": 8,
         "hostMemory": "2Ti", "cpu": 224, "mig": "mixed"},
    ]  # fmt: skip
    assert _import(policies, DYNAMIC, "lab")[1].startswith("ok: ")
    assert (policies / "clusters" / "lab.yaml").read_text() == written


def test_a_new_cluster_file_names_the_previous_driver_release(policies: Path) -> None:
    (policies / "clusters" / "prod-west.yaml").unlink()
    assert _import(policies, WEST, "prod-west")[0] == 0
    spec = yaml.safe_load((policies / "clusters" / "prod-west.yaml").read_text())["spec"]
    assert (spec["kubernetesVersion"], spec["driverVersion"]) == ("1.34", "25.8")
    l40s = next(p for p in spec["nodePools"] if p["gpu"] == "L40S")
    assert l40s["nodeNames"][-1] == "sjc2-r15-l40s-04" and "nodes" not in l40s
    assert l40s["topology"] == {"pcieRoot": 2}  # the catalog has no board of 4 x L40S


def _without_node(dump: Path, node: str, tmp_path: Path) -> Path:
    document = yaml.safe_load(dump.read_text())
    document["items"] = [
        item
        for item in document["items"]
        if item["metadata"]["name"] != node and item.get("spec", {}).get("nodeName") != node
    ]
    path = tmp_path / "smaller.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def test_a_changed_pool_is_rewritten_and_comments_and_other_fields_stay(
    policies: Path, tmp_path: Path
) -> None:
    path = policies / "clusters" / "prod-west.yaml"
    before = path.read_text()
    smaller = _without_node(WEST, "sjc2-r15-l40s-02", tmp_path)
    code, out, _ = _import(policies, smaller, "prod-west")
    assert code == 0 and "updated pool l40s" in out
    after = path.read_text()
    for kept in (
        "# yaml-language-server: $schema=../../docs/policy.schema.json\n",
        "  description: Blackwell training and A100 inference.\n",
        "  driverFeatureGates: {TimeSlicingSettings: true}   # the DRA driver's Helm",
        "# racked on-prem: the nodes' names, not a pattern",
        "topology: {numaNode: 2, pcieRoot: 2}  # two cards per socket, behind one PCIe switch\n",
    ):
        assert kept in before and kept in after, kept
    pools = yaml.safe_load(after)["spec"]["nodePools"]
    assert [p["name"] for p in pools] == ["b200", "a100", "l40s"]
    assert pools[2]["nodeNames"] == [
        "sjc2-r14-l40s-01", "sjc2-r14-l40s-02", "sjc2-r14-l40s-03", "sjc2-r15-l40s-01",
        "sjc2-r15-l40s-04",
    ]  # fmt: skip
    assert pools[0] == yaml.safe_load(before)["spec"]["nodePools"][0]
    assert _import(policies, smaller, "prod-west")[1].startswith("ok: ")  # idempotent
    assert path.read_text() == after


def test_a_pattern_pool_keeps_its_pattern_and_counts_its_nodes(
    policies: Path, tmp_path: Path
) -> None:
    path = policies / "clusters" / "prod-east.yaml"
    smaller = _without_node(EAST, "prod-east-h200-3", tmp_path)
    assert _import(policies, smaller, "prod-east")[0] == 0
    h200 = yaml.safe_load_all(path.read_text()).__next__()["spec"]["nodePools"][1]
    assert h200["nodes"] == 3 and "nodeNames" not in h200
    gone = _without_node(EAST, "prod-east-h200-1", tmp_path)  # a gap: the pattern cannot say it
    assert _import(policies, gone, "prod-east")[0] == 0
    h200 = yaml.safe_load_all(path.read_text()).__next__()["spec"]["nodePools"][1]
    assert h200["nodeNames"] == ["prod-east-h200-0", "prod-east-h200-2", "prod-east-h200-3"]
    assert "nodes" not in h200


def test_a_renamed_pool_keeps_its_name_and_place(policies: Path) -> None:
    path = policies / "clusters" / "prod-west.yaml"
    path.write_text(path.read_text().replace("- name: l40s\n", "- name: ada\n"))
    before = path.read_bytes()
    code, out, _ = _import(policies, WEST, "prod-west")
    assert code == 0 and out.startswith("ok: ") and path.read_bytes() == before
    # a pool named by the default pattern names other nodes once renamed: they are listed
    path = policies / "clusters" / "prod-east.yaml"
    path.write_text(path.read_text().replace("- name: h100\n", "- name: hopper\n"))
    assert "updated pool hopper" in _import(policies, EAST, "prod-east")[1]
    hopper = next(yaml.safe_load_all(path.read_text()))["spec"]["nodePools"][0]
    assert hopper["name"] == "hopper" and hopper["mig"] == "allowed"
    assert hopper["nodeNames"] == [f"prod-east-h100-{i}" for i in range(16)]


def test_hardware_the_file_says_otherwise_is_rewritten(policies: Path) -> None:
    path = policies / "clusters" / "prod-east.yaml"
    text = path.read_text()
    written = "      gpu: H200\n      gpusPerNode: 8\n      hostMemory: 2Ti\n"
    text = text.replace(written, written.replace("8", "4").replace("2Ti", "1Ti"))
    path.write_text(text)
    code, out, _ = _import(policies, EAST, "prod-east")
    assert code == 0 and "updated pool h200" in out
    h200 = next(yaml.safe_load_all(path.read_text()))["spec"]["nodePools"][1]
    assert (h200["gpusPerNode"], h200["hostMemory"]) == (8, "2Ti")


def test_a_pool_without_nodes_in_the_dump_is_kept_with_a_warning(
    policies: Path, tmp_path: Path
) -> None:
    document = yaml.safe_load(EAST.read_text())
    document["items"] = [i for i in document["items"] if "h200" not in str(i["metadata"]["name"])]
    dump = tmp_path / "no-h200.yaml"
    dump.write_text(yaml.safe_dump(document))
    before = (policies / "clusters" / "prod-east.yaml").read_bytes()
    code, out, err = _import(policies, dump, "prod-east")
    assert code == 0 and out.startswith("ok: ")
    assert "warning[GF816]: pool h200 of cluster prod-east: the dump has none of its 4 nodes" in err
    assert f"{policies}/clusters/prod-east.yaml:21:7" in err  # the pool's entry
    assert (policies / "clusters" / "prod-east.yaml").read_bytes() == before


def test_check_and_strict_write_nothing(policies: Path, tmp_path: Path) -> None:
    smaller = _without_node(EAST, "prod-east-h200-3", tmp_path)
    path = policies / "clusters" / "prod-east.yaml"
    before = path.read_bytes()
    code, out, _ = _import(policies, smaller, "prod-east", "--check")
    assert (code, out.strip()) == (1, f"would change {path} (updated pool h200)")
    code, _, err = _import(policies, smaller, "prod-east", "--strict")
    assert code == 1 and "--strict" in err  # the dump's warnings (GF811, GF812) fail it
    assert path.read_bytes() == before


def _dump_with(tmp_path: Path, change: str, by: str) -> Path:
    text = DYNAMIC.read_text()
    assert change in text
    path = tmp_path / "changed.yaml"
    path.write_text(text.replace(change, by))
    return path


def test_an_unknown_gpu_is_an_error_that_prints_its_gpu_model(
    policies: Path, tmp_path: Path
) -> None:
    dump = _dump_with(tmp_path, "NVIDIA H100 80GB HBM3", "NVIDIA H300 141GB")
    dump.write_text(dump.read_text().replace("string: Hopper", "string: Rubin"))
    code, out, _ = _import(policies, dump, "lab", "--format", "json")
    assert code == 1 and not (policies / "clusters" / "lab.yaml").exists()
    report = json.loads(out)
    unknown = [d for d in report["diagnostics"] if d["code"] == "GF810"]
    assert unknown and report["summary"]["exitCode"] == 1
    hint = unknown[0]["hints"][0]
    document = yaml.safe_load(hint.split(": ", 1)[1])
    assert document["metadata"]["name"] == "h300-141gb"
    assert document["spec"]["productName"] == "NVIDIA H300 141GB"
    assert document["spec"]["memoryMiB"] == 81559


def test_a_gpu_model_of_the_fleet_is_matched(policies: Path, tmp_path: Path) -> None:
    dump = _dump_with(tmp_path, "NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3 Custom")
    dump.write_text(dump.read_text().replace("9.0.0", "9.9.0"))
    assert _import(policies, dump, "lab")[0] == 1  # no catalog model has compute capability 9.9
    (policies / "models.yaml").write_text(
        "apiVersion: gpufleet.dev/v1alpha1\nkind: GpuModel\nmetadata: {name: h100-custom}\n"
        "spec: {productName: NVIDIA H100 80GB HBM3 Custom, architecture: Hopper, "
        'cudaComputeCapability: "9.9", memoryMiB: 81559, pciDeviceId: "0x2330"}\n'
    )
    code, _, err = _import(policies, dump, "lab")
    assert code == 0, err
    pool = yaml.safe_load((policies / "clusters" / "lab.yaml").read_text())["spec"]["nodePools"][0]
    assert pool["gpu"] == "h100-custom" and "mig" not in pool  # the fleet's model has no MIG


def test_a_node_of_two_models_is_refused(policies: Path, tmp_path: Path) -> None:
    document = yaml.safe_load(EAST.read_text())
    slices = [
        i for i in document["items"] if i.get("spec", {}).get("nodeName") == "prod-east-h200-0"
    ]
    slices[0]["spec"]["devices"][3]["attributes"]["productName"]["string"] = "NVIDIA H100 80GB HBM3"
    dump = tmp_path / "mixed.yaml"
    dump.write_text(yaml.safe_dump(document))
    code, _, err = _import(policies, dump, "prod-east")
    assert code == 1 and "error[GF813]: node prod-east-h200-0 holds GPUs of 2 models" in err


def test_a_node_whose_driver_publishes_nothing_is_taken_by_its_labels(tmp_path: Path) -> None:
    dump = yaml.safe_load(DYNAMIC.read_text())
    dump["items"] = [i for i in dump["items"] if i.get("spec", {}).get("nodeName") != "lab-h100-1"]
    path = tmp_path / "silent.yaml"
    path.write_text(yaml.safe_dump(dump))
    pools, found = group_pools(read_dump(str(path))[0], load_catalog(), NVIDIA_DRIVER)
    assert [(p.nodes, p.mig) for p in pools] == [(("lab-h100-0", "lab-h100-1"), "mixed")]
    (silent,) = [d for d in found if d.code == "GF811"]
    assert "lab-h100-1 publishes 0 of its 8 GPUs" in silent.message


@pytest.mark.parametrize(
    ("text", "code", "exit_code"),
    [
        ("apiVersion: v1\nkind: List\nitems: []\n", "GF814", 2),
        ("- not a dump\n", "GF801", 2),
        ("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node}\n", "GF802", 2),
        ("a: &a [*a]\n", "GF103", 2),
    ],
)
def test_bad_dumps_exit_2_with_located_diagnostics(
    policies: Path, tmp_path: Path, text: str, code: str, exit_code: int
) -> None:
    dump = tmp_path / "dump.yaml"
    dump.write_text(text)
    status, _, err = _import(policies, dump, "prod-east")
    assert status == exit_code and f"[{code}]" in err and "Traceback" not in err
    assert f"{dump}:" in err


def test_the_cluster_name_must_be_one(policies: Path) -> None:
    code, _, err = _import(policies, EAST, "Prod_East")
    assert code == 2 and "[GF113]" in err


def test_a_cluster_file_with_anchors_is_not_rewritten(policies: Path, tmp_path: Path) -> None:
    path = policies / "clusters" / "prod-east.yaml"
    path.write_text(
        path.read_text().replace(
            "cpu: 224\n      mig: allowed", "cpu: &cpu 224\n      mig: allowed", 1
        )
    )
    before = path.read_bytes()
    smaller = _without_node(EAST, "prod-east-h200-3", tmp_path)
    code, _, err = _import(policies, smaller, "prod-east")
    assert code == 2 and "[GF815]" in err and path.read_bytes() == before


def test_an_interrupted_write_leaves_the_old_file(
    policies: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    path = policies / "clusters" / "prod-east.yaml"
    before = path.read_bytes()
    smaller = _without_node(EAST, "prod-east-h200-3", tmp_path)

    def crash(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", crash)
    code, _, err = _import(policies, smaller, "prod-east")
    assert code == 2 and "[GF502]" in err
    assert path.read_bytes() == before


def test_a_mig_gpu_of_an_unlisted_name_is_matched_by_its_node_memory_label(
    tmp_path: Path,
) -> None:
    text = EAST.read_text().replace("NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM5 80GB")
    path = tmp_path / "renamed.yaml"
    path.write_text(text)
    pools = _pools(path)
    # the MIG nodes publish no whole GPU (no memory capacity): nvidia.com/gpu.memory decides
    assert pools["H100-80GB"][:3] == (16, 8, "allowed")
    unlabelled = yaml.safe_load(text)
    for item in unlabelled["items"]:
        item["metadata"].get("labels", {}).pop("nvidia.com/gpu.memory", None)
    path.write_text(yaml.safe_dump(unlabelled))
    found, problems = group_pools(read_dump(str(path))[0], load_catalog(), NVIDIA_DRIVER)
    unknown = {d.message.split(" of node ")[1].split(" ")[0] for d in problems if d.code == "GF810"}
    assert unknown == {f"prod-east-h100-{i}" for i in (11, 12, 13, 14)}
    assert "H100-80GB" in {p.shape.model for p in found}  # the whole GPUs still match


def test_a_gpu_node_without_capacity_is_a_located_error(tmp_path: Path) -> None:
    document = yaml.safe_load(DYNAMIC.read_text())
    node = next(i for i in document["items"] if i["metadata"]["name"] == "lab-h100-0")
    del node["status"]["capacity"]["memory"]
    path = tmp_path / "no-memory.yaml"
    path.write_text(yaml.safe_dump(document))
    _, problems = group_pools(read_dump(str(path))[0], load_catalog(), NVIDIA_DRIVER)
    (missing,) = [d for d in problems if d.code == "GF802"]
    assert "Node lab-h100-0: status.capacity has no memory" in missing.message
    assert missing.span is not None and missing.span.line > 1
