"""The dump reader: both API shapes read into the same typed facts, and hostile dumps end in
located diagnostics, never a traceback. Expected values come from the fixtures' design
(tests/fixtures/inventory/generate.py's docstring), not from the reader's output."""

from __future__ import annotations

import io
import sys
from fractions import Fraction
from pathlib import Path

import pytest
import yaml

from compiler.diagnostics import CompileError, Severity
from compiler.inventory import ClusterDump, Version, read_dump
from compiler.inventory import read as read_module

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "inventory"
EAST = FIXTURES / "k137-prod-east.yaml"
WEST = FIXTURES / "k134-prod-west.yaml"
DYNAMIC = FIXTURES / "k137-dynamic-mig.yaml"
GIB = 2**30


def _read(path: Path) -> ClusterDump:
    dump, warnings = read_dump(str(path))
    assert warnings == []
    return dump


def _codes(error: pytest.ExceptionInfo[CompileError]) -> list[str]:
    return [d.code for d in error.value.diagnostics]


def _read_text(tmp_path: Path, text: str) -> ClusterDump:
    path = tmp_path / "dump.yaml"
    path.write_text(text, encoding="utf-8")
    return read_dump(str(path))[0]


def _fails(tmp_path: Path, text: str | bytes) -> CompileError:
    path = tmp_path / "dump.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    with pytest.raises(CompileError) as error:
        read_dump(str(path))
    return error.value


def test_the_fixtures_are_what_the_generator_writes() -> None:
    sys.path.insert(0, str(FIXTURES))
    try:
        import generate  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(FIXTURES))
    for name in generate.FIXTURES:
        assert (FIXTURES / name).read_text(encoding="utf-8") == generate.render(name), name


def test_prod_east_has_the_designed_nodes_and_devices() -> None:
    dump = _read(EAST)
    gpu_nodes = [n for n in dump.nodes if "nvidia.com/gpu.count" in n.labels]
    assert len(dump.nodes) == 2 + 16 + 4 + 8  # a control plane and a CPU node besides
    assert len(gpu_nodes) == 28
    assert len(dump.slices) == 28
    # 12 whole-GPU H100 nodes, 4 with 2x3g.40gb on each of 8 GPUs, 4 H200, 8 L40S less one lost
    assert sum(len(s.devices) for s in dump.slices) == 12 * 8 + 4 * 16 + 4 * 8 + 8 * 4 - 1
    node = dump.node("prod-east-h100-0")
    assert node is not None and node.ready
    assert node.capacity["cpu"] == 224 and node.capacity["memory"] == 2 * 2**40
    assert node.kubelet_version == "v1.37.1"
    assert [str(t) for t in node.taints] == ["gpufleet.dev/gpu=present:NoSchedule"]


def test_v1_devices_have_qualified_typed_attributes() -> None:
    dump = _read(EAST)
    (slice_,) = dump.slices_of("prod-east-h100-0", "gpu.nvidia.com")
    assert slice_.api_version == "resource.k8s.io/v1" and slice_.pool == "prod-east-h100-0"
    gpu = slice_.devices[0]
    assert gpu.name == "gpu-0"
    assert gpu.attribute("gpu.nvidia.com/productName") == "NVIDIA H100 80GB HBM3"
    assert gpu.attribute("gpu.nvidia.com/type") == "gpu"
    capability = gpu.attribute("gpu.nvidia.com/cudaComputeCapability")
    assert isinstance(capability, Version) and capability == "9.0.0"
    assert "resource.kubernetes.io/pciBusID" in gpu.attributes  # the current attribute set
    assert "gpu.nvidia.com/pcieBusID" not in gpu.attributes
    assert gpu.capacity["gpu.nvidia.com/memory"] == 81559 * 2**20


def test_static_mig_devices_carry_parent_profile_and_memory_slices() -> None:
    dump = _read(EAST)
    (slice_,) = dump.slices_of("prod-east-h100-11", "gpu.nvidia.com")
    assert len(slice_.devices) == 16
    first = slice_.devices[0]
    assert first.attribute("gpu.nvidia.com/type") == "mig"
    assert first.attribute("gpu.nvidia.com/profile") == "3g.40gb"
    parents = {d.attribute("gpu.nvidia.com/parentUUID") for d in slice_.devices}
    assert len(parents) == 8
    slices = {k for d in slice_.devices[:2] for k in d.capacity if "memorySlice" in k}
    assert slices == {f"gpu.nvidia.com/memorySlice{i}" for i in range(8)}


def test_device_taints_and_taint_rules() -> None:
    dump = _read(EAST)
    (h100_3,) = dump.slices_of("prod-east-h100-3", "gpu.nvidia.com")
    tainted = [d.name for d in h100_3.devices if d.taints]
    assert tainted == ["gpu-6"]
    assert str(h100_3.devices[6].taints[0]) == "gpu.nvidia.com/xid=48:NoSchedule"
    (rule,) = dump.taint_rules
    assert rule.api_version == "resource.k8s.io/v1" and rule.device is None
    (h100_15,) = dump.slices_of("prod-east-h100-15", "gpu.nvidia.com")
    assert all(
        [str(t) for t in dump.device_taints(h100_15, d)] == ["gpufleet.dev/burn-in=true:NoSchedule"]
        for d in h100_15.devices
    )
    assert dump.device_taints(h100_3, h100_3.devices[0]) == ()


def test_v1beta1_devices_read_like_v1_and_keep_the_previous_attribute_set() -> None:
    dump = _read(WEST)
    (slice_,) = dump.slices_of("prod-west-b200-0", "gpu.nvidia.com")
    assert slice_.api_version == "resource.k8s.io/v1beta1"
    gpu = slice_.devices[0]
    assert gpu.attribute("gpu.nvidia.com/productName") == "NVIDIA B200"
    assert gpu.attribute("gpu.nvidia.com/pcieBusID") == "0000:18:00.0"  # 25.8's name
    assert "resource.kubernetes.io/pciBusID" not in gpu.attributes
    assert gpu.capacity["gpu.nvidia.com/memory"] == 183359 * 2**20
    (lost,) = dump.slices_of("prod-west-b200-7", "gpu.nvidia.com")
    assert [d.name for d in lost.devices] == [f"gpu-{i}" for i in (0, 1, 2, 4, 5, 6, 7)]
    (rule,) = dump.taint_rules
    assert rule.api_version == "resource.k8s.io/v1alpha3"
    assert (rule.pool, rule.device) == ("prod-west-b200-3", "gpu-2")


def _as_version(text: str, version: str) -> str:
    """The dump with its ResourceSlices in `version`'s shape (v1beta1: devices under basic)."""
    document = yaml.safe_load(text)
    for item in document["items"]:
        if item["kind"] != "ResourceSlice":
            continue
        item["apiVersion"] = f"resource.k8s.io/{version}"
        devices = item["spec"]["devices"]
        if version == "v1beta1":
            item["spec"]["devices"] = [
                {"name": d["name"], "basic": {k: v for k, v in d.items() if k != "name"}}
                for d in devices
                if "basic" not in d
            ] or devices
        else:
            item["spec"]["devices"] = [
                {"name": d["name"], **d.get("basic", {})} if "basic" in d else d for d in devices
            ]
    return yaml.safe_dump(document)


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2", "v1"])
@pytest.mark.parametrize("fixture", [EAST, WEST, DYNAMIC])
def test_every_slice_version_reads_into_the_same_devices(
    fixture: Path, version: str, tmp_path: Path
) -> None:
    original = _read(fixture)
    converted = _read_text(tmp_path, _as_version(fixture.read_text(), version))
    assert [s.devices for s in converted.slices] == [s.devices for s in original.slices]
    assert [s.shared_counters for s in converted.slices] == [
        s.shared_counters for s in original.slices
    ]
    assert {s.api_version for s in converted.slices} == {f"resource.k8s.io/{version}"}


def test_partitionable_devices_consume_shared_counters() -> None:
    dump = _read(DYNAMIC)
    (slice_,) = dump.slices_of("lab-h100-0", "gpu.nvidia.com")
    assert [c.name for c in slice_.shared_counters] == [f"gpu-{i}-counter-set" for i in range(8)]
    counters = slice_.shared_counters[0].counters
    assert counters["memory"] == 81559 * 2**20 and counters["memory-slice-7"] == 1
    whole = slice_.devices[0]
    (consumed,) = whole.consumes_counters
    assert consumed.counter_set == "gpu-0-counter-set" and consumed.counters == counters
    # per GPU: the whole GPU, 7g x1, 3g x2, 2g x3, 1g x7
    assert len(slice_.devices) == 8 * (1 + 1 + 2 + 3 + 7)
    three_g = next(d for d in slice_.devices if d.name == "gpu-0-mig-3g40gb-9-4")
    (used,) = three_g.consumes_counters
    assert {k for k in used.counters if k.startswith("memory-slice")} == {
        f"memory-slice-{i}" for i in (4, 5, 6, 7)
    }


def test_stdin_is_read_for_a_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(EAST.read_bytes())))
    dump, _ = read_dump("-")
    assert dump.file == "<stdin>" and len(dump.nodes) == 30


def test_multi_document_dumps_and_single_objects_are_read(tmp_path: Path) -> None:
    document = yaml.safe_load(EAST.read_text())
    nodes = [i for i in document["items"] if i["kind"] == "Node"][:3]
    text = (
        yaml.safe_dump(nodes[0])
        + "---\n"
        + yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": nodes[1:]})
    )
    dump = _read_text(tmp_path, text)
    assert [n.name for n in dump.nodes] == sorted(n["metadata"]["name"] for n in nodes)


def test_an_empty_list_is_an_empty_dump(tmp_path: Path) -> None:
    dump = _read_text(tmp_path, "apiVersion: v1\nitems: []\nkind: List\nmetadata: {}\n")
    assert dump.nodes == () and dump.slices == ()


def test_the_newest_generation_of_a_pool_counts(tmp_path: Path) -> None:
    document = yaml.safe_load(EAST.read_text())
    old = next(i for i in document["items"] if i["kind"] == "ResourceSlice")
    new = yaml.safe_load(yaml.safe_dump(old))
    new["metadata"]["name"] += "-new"
    new["spec"]["pool"]["generation"] = 2
    new["spec"]["devices"] = new["spec"]["devices"][:1]
    document["items"].append(new)
    dump = _read_text(tmp_path, yaml.safe_dump(document))
    (current,) = dump.slices_of(old["spec"]["nodeName"], "gpu.nvidia.com")
    assert current.name == new["metadata"]["name"] and len(current.devices) == 1


LIST = "apiVersion: v1\nkind: List\nitems:\n"
NODE = """\
- apiVersion: v1
  kind: Node
  metadata:
    name: n1
    labels: {a: b}
  status:
    capacity: {cpu: "8", memory: 1Gi}
"""
SLICE = """\
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {name: s1}
  spec:
    driver: gpu.nvidia.com
    nodeName: n1
    pool: {name: n1, generation: 1, resourceSliceCount: 1}
    devices:
      - name: gpu-0
        attributes:
          productName: {string: NVIDIA L4}
        capacity:
          memory: {value: 23034Mi}
"""


def test_the_minimal_valid_dump_reads(tmp_path: Path) -> None:
    dump = _read_text(tmp_path, LIST + NODE + SLICE)
    assert dump.nodes[0].labels == {"a": "b"} and not dump.nodes[0].ready
    assert dump.slices[0].devices[0].capacity == {"gpu.nvidia.com/memory": Fraction(23034 * 2**20)}


@pytest.mark.parametrize(
    ("text", "code", "line", "words"),
    [
        ("- just\n- a list\n", "GF801", 1, "not a Kubernetes object"),
        ("42\n", "GF801", 1, "not a Kubernetes object"),
        ("apiVersion: v1\nkind: List\nitems: {a: 1}\n", "GF801", 3, "`items`"),
        (LIST + "- 7\n", "GF801", 4, "items[0] is not a Kubernetes object"),
        (LIST + "- {apiVersion: v1, kind: Node}\n", "GF802", 4, "metadata is missing"),
        (LIST + NODE.replace("name: n1", "name: [n1]"), "GF802", 7, "is a list, not a string"),
        (LIST + NODE.replace("{a: b}", "{a: 3}"), "GF802", 8, "labels.a is not a string"),
        (LIST + NODE.replace('cpu: "8"', "cpu: lots"), "GF802", 10, "not a Kubernetes quantity"),
        (
            LIST + SLICE.replace("    driver: gpu.nvidia.com\n", ""),
            "GF802",
            7,
            "spec.driver is missing",
        ),
        (
            LIST + SLICE.replace("{string: NVIDIA L4}", "{string: L4, int: 4}"),
            "GF802",
            14,
            "exactly one of int, bool, string, version (found int, string)",
        ),
        (LIST + SLICE.replace("{value: 23034Mi}", "23034Mi"), "GF802", 16, "`value`"),
        (LIST + SLICE.replace("generation: 1", "generation: one"), "GF802", 10, "not an integer"),
        (LIST + NODE + NODE, "GF802", 11, "Node n1 is in the dump twice"),
        ("a: 1\na: 2\n", "GF102", 2, "duplicate key"),
        ("a: !!python/object:os.system x\n", "GF103", 1, "tag"),
        ("a: [1, 2\n", "GF101", 2, ""),
    ],
)
def test_hostile_dumps_get_located_diagnostics(
    tmp_path: Path, text: str, code: str, line: int, words: str
) -> None:
    error = _fails(tmp_path, text)
    found = [d for d in error.diagnostics if d.code == code]
    assert found, [(d.code, d.message) for d in error.diagnostics]
    assert found[0].span is not None and found[0].span.file.endswith("dump.yaml")
    assert found[0].span.line == line, (found[0].span, found[0].message)
    assert words in found[0].message


def test_one_broken_object_does_not_hide_the_next(tmp_path: Path) -> None:
    broken = NODE.replace("name: n1", "name: [n1]")
    error = _fails(tmp_path, LIST + broken + SLICE.replace("{value: 23034Mi}", "7"))
    assert _codes_of(error) == ["GF802", "GF802"]


def _codes_of(error: CompileError) -> list[str]:
    return [d.code for d in error.diagnostics]


def test_other_kinds_and_versions_are_skipped_with_a_warning(tmp_path: Path) -> None:
    pod = "- {apiVersion: v1, kind: Pod, metadata: {name: p}}\n"
    old = SLICE.replace("resource.k8s.io/v1", "resource.k8s.io/v1alpha2")
    path = tmp_path / "dump.yaml"
    path.write_text(LIST + NODE + pod + old)
    dump, warnings = read_dump(str(path))
    assert [n.name for n in dump.nodes] == ["n1"] and dump.slices == ()
    assert [w.code for w in warnings] == ["GF803", "GF803"]
    assert all(w.severity is Severity.WARNING for w in warnings)
    assert "Pod (v1)" in warnings[0].message and "v1alpha2" in warnings[1].message


def test_an_alias_bomb_is_refused_before_it_expands(tmp_path: Path) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    error = _fails(tmp_path, "\n".join(lines) + "\n")
    assert _codes_of(error) == ["GF120"]
    assert "aliases expanded" in error.diagnostics[0].message
    assert "kubectl" in error.diagnostics[0].hints[0]  # a hint about dumps, not policy files


def test_deep_nesting_is_refused(tmp_path: Path) -> None:
    error = _fails(tmp_path, "[" * 100 + "]" * 100 + "\n")
    assert _codes_of(error) == ["GF120"]


def test_a_dump_larger_than_the_budget_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(read_module, "MAX_DUMP_BYTES", 1000)
    error = _fails(tmp_path, LIST + NODE * 20)
    assert _codes_of(error) == ["GF120"]
    assert "larger than 1000 bytes" in error.diagnostics[0].message


def test_more_nodes_than_a_policy_file_may_have_are_fine_in_a_dump() -> None:
    from compiler.load.budget import MAX_NODES_PER_FILE

    text = DYNAMIC.read_text()
    assert sum(1 for _ in yaml.parse(text)) > 2 * MAX_NODES_PER_FILE  # events, roughly nodes
    assert len(_read(DYNAMIC).slices) == 2


def test_bytes_that_are_not_utf8_are_refused(tmp_path: Path) -> None:
    error = _fails(tmp_path, b"apiVersion: v1\nkind: \xff\n")
    assert _codes_of(error) == ["GF109"]


def test_a_missing_file_is_a_diagnostic(tmp_path: Path) -> None:
    with pytest.raises(CompileError) as error:
        read_dump(str(tmp_path / "nowhere.yaml"))
    assert _codes(error) == ["GF109"]
