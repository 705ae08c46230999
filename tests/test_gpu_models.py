"""The fleet's own GPU models (kind GpuModel): checked by the rules the built-in catalog is,
with located diagnostics, and then treated exactly as a built-in model by solve and emit."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from compiler.catalog import CatalogError, load_catalog
from compiler.catalog.builtin import CATALOG_FILE
from compiler.diagnostics import CompileError, Diagnostic
from compiler.pipeline import compile_policies
from tests import fleets
from tests.conftest import REPO, PolicyWriter

# The H100 80GB as the reference tables give it (../shared/reference/nvidia-gpus.md: NVML's
# name and memory.total, the 7-compute / 8-memory-slice placements, GI ids, `-lgip` memory),
# written here by hand under another name and product name.
TWIN = (
    fleets.HEADER
    + """kind: GpuModel
metadata: {name: h100-twin}
spec:
  family: twin
  productName: NVIDIA H100 Twin
  architecture: Hopper
  cudaComputeCapability: "9.0"
  memoryMiB: 81559
  pciDeviceId: "0x2330"
  boards:
    - {name: hgx-twin-8, gpus: 8, numaNode: 4, pcieRoot: 2}
  mig:
    memorySlices: 8
    computeSlices: 7
    profiles:
      - {name: 1g.10gb, giProfileId: 19, computeSlices: 1, memorySlices: 1,
         starts: [0, 1, 2, 3, 4, 5, 6], memoryMiB: 9984}
      - {name: 1g.10gb+me, giProfileId: 20, computeSlices: 1, memorySlices: 1,
         starts: [0, 1, 2, 3, 4, 5, 6], media: true, memoryMiB: 9984}
      - {name: 1g.20gb, giProfileId: 15, computeSlices: 1, memorySlices: 2,
         starts: [0, 2, 4, 6], memoryMiB: 20096}
      - {name: 2g.20gb, giProfileId: 14, computeSlices: 2, memorySlices: 2,
         starts: [0, 2, 4], memoryMiB: 20096}
      - {name: 3g.40gb, giProfileId: 9, computeSlices: 3, memorySlices: 4,
         starts: [0, 4], memoryMiB: 40448}
      - {name: 4g.40gb, giProfileId: 5, computeSlices: 4, memorySlices: 4,
         starts: [0], memoryMiB: 40448}
      - {name: 7g.80gb, giProfileId: 0, computeSlices: 7, memorySlices: 8,
         starts: [0], memoryMiB: 81152}
"""
)

# RTX PRO 6000 Blackwell (0x2BB5): MIG with 4 memory slices (reference: mig-parted's default
# config lists 1g.24gb x4, 2g.48gb x2, 4g.96gb x1). Its GI ids and memory here are the
# platform's figures for the test, not facts of the catalog.
RTX = (
    fleets.HEADER
    + """kind: GpuModel
metadata: {name: rtx-pro-6000}
spec:
  productName: NVIDIA RTX PRO 6000 Blackwell Server Edition
  architecture: Blackwell
  cudaComputeCapability: "12.0"
  memoryMiB: 97887
  pciDeviceId: "0x2BB5"
  mig:
    memorySlices: 4
    computeSlices: 4
    profiles:
      - {name: 1g.24gb, giProfileId: 14, computeSlices: 1, memorySlices: 1,
         starts: [0, 1, 2, 3], memoryMiB: 24064}
      - {name: 2g.48gb, giProfileId: 5, computeSlices: 2, memorySlices: 2,
         starts: [0, 2], memoryMiB: 48128}
      - {name: 4g.96gb, giProfileId: 0, computeSlices: 4, memorySlices: 4,
         starts: [0], memoryMiB: 97280}
"""
)


def test_the_schema_takes_a_model() -> None:
    schema = json.loads((REPO / "docs" / "policy.schema.json").read_text(encoding="utf-8"))
    for text in (TWIN, RTX):
        jsonschema.validate(yaml.safe_load(text), schema)


def _fleet(gpu: str, models: str, extra: dict[str, str], guaranteed: int = 8) -> dict[str, str]:
    """One cluster of two 8-GPU nodes of `gpu` (MIG allowed), a whole-GPU tier and a 3g.40gb
    tier selecting `models`, two teams."""
    pools = f"""
    - {{name: gpus, nodes: 2, gpu: {gpu}, gpusPerNode: 8, hostMemory: 2Ti, cpu: 224, mig: allowed}}
"""
    return {
        "clusters/c1.yaml": fleets.cluster(pools=pools),
        "tiers/whole.yaml": fleets.tier(
            "whole",
            f"{{select: {{models: [{models}]}},"
            " gangMatchAttribute: resource.kubernetes.io/pcieRoot}",
        ),
        "tiers/slice.yaml": fleets.tier(
            "slice", f"{{select: {{models: [{models}]}}, partition: 3g.40gb}}"
        ),
        "ladder.yaml": fleets.LADDER,
        "teams/a.yaml": fleets.team("a", f"[{{tier: whole, guaranteed: {guaranteed}, gang: 2}}]"),
        "teams/b.yaml": fleets.team("b", "[{tier: slice, guaranteed: 6}]"),
        **extra,
    }


def _out(root: Path) -> dict[str, str]:
    return compile_policies(root).tree


def test_a_model_equal_to_a_built_in_one_compiles_to_the_same_plan_and_objects(
    write_policies: PolicyWriter, tmp_path: Path
) -> None:
    built_in = _out(write_policies(_fleet("H100-80GB", "H100-80GB", {})))
    twin = _out(write_policies(_fleet("h100-twin", "h100-twin", {"catalog/twin.yaml": TWIN})))
    plans = sorted(p for p in built_in if p.startswith("plan/"))
    assert plans and plans == sorted(p for p in twin if p.startswith("plan/"))
    for path in plans:
        assert json.loads(twin[path]) == json.loads(built_in[path])
    assert set(twin) == set(built_in)

    def same(text: str) -> str:  # what differs by construction: the model's names
        return (
            text.replace("NVIDIA H100 Twin", "NVIDIA H100 80GB HBM3")
            .replace("h100-twin", "H100-80GB")
            .replace("hgx-twin-8", "hgx-h100-8")
        )

    differing = [p for p in built_in if same(twin[p]) != built_in[p]]
    assert differing == []
    # and the twin really is published under its own product name
    assert any("NVIDIA H100 Twin" in text for text in twin.values())


def test_a_pool_of_a_new_model_serves_its_own_mig_profiles(write_policies: PolicyWriter) -> None:
    # 2 nodes x 4 GPUs, each GPU four 1g.24gb instances (4 memory slices of 1): 32 devices.
    pools = """
    - {name: rtx, nodes: 2, gpu: RTX-PRO-6000, gpusPerNode: 4, hostMemory: 1Ti, cpu: 128,
       mig: allowed}
"""
    files = {
        "clusters/c1.yaml": fleets.cluster(pools=pools),
        "catalog/rtx.yaml": RTX,
        "tiers/small.yaml": fleets.tier(
            "small", "{select: {models: [rtx-pro-6000]}, partition: 1g.24gb}"
        ),
        "ladder.yaml": fleets.LADDER,
        "teams/a.yaml": fleets.team("a", "[{tier: small, guaranteed: 32}]"),
    }
    tree = compile_policies(write_policies(files)).tree
    plan = json.loads(tree["plan/c1.json"])
    assert plan["assignments"] == {"a/a/small": {"rtx/mig-1g.24gb": 32}}
    config = next(text for path, text in tree.items() if "node-config" in path and "mig" in path)
    assert '"0x2BB510DE"' in config and '"1g.24gb": 4' in config
    device_class = next(t for p, t in tree.items() if p.endswith("deviceclass_small.yaml"))
    assert "NVIDIA RTX PRO 6000 Blackwell Server Edition" in device_class

    files["teams/a.yaml"] = fleets.team("a", "[{tier: small, guaranteed: 33}]")
    with pytest.raises(CompileError) as caught:
        compile_policies(write_policies(files))
    assert [d.code for d in caught.value.diagnostics if d.severity.value == "error"] == ["GF401"]


def _refusals(root: Path) -> list[Diagnostic]:
    with pytest.raises(CompileError) as caught:
        compile_policies(root)
    return [d for d in caught.value.diagnostics if d.severity.value == "error"]


BROKEN = [
    # (what, text replaced in RTX, by, code, message part, the source line the span is on)
    (
        "start past the slices",
        "starts: [0, 2], memoryMiB: 48128",
        "starts: [0, 3], memoryMiB: 48128",
        "GF250",
        "would end at slice 4, past the GPU's 4 memory slices",
        "starts: [0, 3]",
    ),
    (
        "overlapping placements",
        "starts: [0, 2], memoryMiB: 48128",
        "starts: [0, 1], memoryMiB: 48128",
        "GF250",
        "the placement at memory slice 1 overlaps the one at 0",
        "starts: [0, 1]",
    ),
    (
        "more compute than the GPU",
        "giProfileId: 0, computeSlices: 4",
        "giProfileId: 0, computeSlices: 5",
        "GF250",
        "takes 5 compute slices, but the GPU has 4",
        "4g.96gb",
    ),
    (
        "a profile twice",
        "name: 2g.48gb",
        "name: 1g.24gb",
        "GF250",
        "listed twice",
        "giProfileId: 5",
    ),
    (
        "an id twice",
        "giProfileId: 5",
        "giProfileId: 14",
        "GF250",
        "same GPU-instance profile id 14",
        "2g.48gb",
    ),
    (
        "+me without media",
        "name: 4g.96gb",
        "name: 4g.96gb+me",
        "GF250",
        "does not hold the media",
        "4g.96gb",
    ),
    (
        "instance memory beyond the GPU",
        "memoryMiB: 97280",
        "memoryMiB: 99999",
        "GF250",
        "more than the GPU's 97887",
        "memoryMiB: 99999",
    ),
    (
        "a board that does not divide",
        "  mig:\n",
        "  boards: [{name: b, gpus: 8, numaNode: 3}]\n  mig:\n",
        "GF250",
        "numaNode groups of 3 GPUs do not divide its 8 GPUs",
        "boards:",
    ),
    (
        "the name of a built-in",
        "name: rtx-pro-6000}",
        "name: l40s}",
        "GF251",
        "'l40s' already names GPU model L40S (its id)",
        "metadata:",
    ),
    (
        "a built-in's product name",
        "productName: NVIDIA RTX PRO 6000 Blackwell Server Edition",
        "productName: NVIDIA H100 80GB HBM3",
        "GF251",
        "already names GPU model H100-80GB (its product name)",
        "productName:",
    ),
    (
        "a built-in's alias",
        "  productName:",
        "  aliases: [nvidia-a30]\n  productName:",
        "GF251",
        "'nvidia-a30' already names GPU model A30 (an alias)",
        "aliases:",
    ),
    (
        "a family that is a model's name",
        "  productName:",
        "  family: B200-180GB\n  productName:",
        "GF251",
        "family 'B200-180GB' is the name of GPU model B200",
        "family:",
    ),
]


@pytest.mark.parametrize(
    ("old", "new", "code", "message", "line"),
    [b[1:] for b in BROKEN],
    ids=[b[0] for b in BROKEN],
)
def test_a_broken_model_is_refused_where_it_is_written(
    write_policies: PolicyWriter, old: str, new: str, code: str, message: str, line: str
) -> None:
    assert old in RTX
    files = {
        "clusters/c1.yaml": fleets.cluster(),
        "catalog/rtx.yaml": RTX.replace(old, new, 1),
        "tiers/whole.yaml": fleets.tier("whole", "{select: {models: [H100]}}"),
        "ladder.yaml": fleets.LADDER,
        "teams/a.yaml": fleets.team("a", "[{tier: whole, guaranteed: 8}]"),
    }
    root = write_policies(files)
    (refusal,) = _refusals(root)
    assert (refusal.code, message in refusal.message) == (code, True), refusal.message
    assert refusal.span is not None and refusal.span.file.endswith("catalog/rtx.yaml")
    lines = (root / "catalog/rtx.yaml").read_text().splitlines()
    assert line in lines[refusal.span.line - 1]
    assert refusal.hints


def test_two_fleet_models_may_not_share_a_name(write_policies: PolicyWriter) -> None:
    other = (
        RTX.replace("name: rtx-pro-6000}", "name: rtx-other}")
        .replace("  productName:", "  aliases: [RTX-PRO-6000]\n  productName:")
        .replace("Server Edition", "Workstation Edition")
    )
    files = {
        "clusters/c1.yaml": fleets.cluster(),
        "catalog/rtx.yaml": RTX,
        "catalog/rtx-other.yaml": other,
        "tiers/whole.yaml": fleets.tier("whole", "{select: {models: [H100]}}"),
        "ladder.yaml": fleets.LADDER,
        "teams/a.yaml": fleets.team("a", "[{tier: whole, guaranteed: 8}]"),
    }
    (refusal,) = _refusals(write_policies(files))
    assert refusal.code == "GF251"
    assert "'rtx-pro-6000' already names GPU model rtx-other (an alias)" in refusal.message


def test_a_model_may_join_a_built_in_family(write_policies: PolicyWriter) -> None:
    # An H100 PCIe (reference: "NVIDIA H100 PCIe", 81559 MiB, 0x2331) in family H100: a tier
    # naming the family selects it beside the built-in H100s.
    pcie = (
        TWIN.replace("family: twin", "family: H100")
        .replace("NVIDIA H100 Twin", "NVIDIA H100 PCIe")
        .replace("h100-twin", "h100-pcie")
        .replace('"0x2330"', '"0x2331"')
    )
    files = _fleet("h100-pcie", "H100", {"catalog/pcie.yaml": pcie})
    tree = compile_policies(write_policies(files)).tree
    device_class = next(t for p, t in tree.items() if p.endswith("deviceclass_whole.yaml"))
    for product in ("NVIDIA H100 PCIe", "NVIDIA H100 80GB HBM3", "NVIDIA H100 NVL"):
        assert product in device_class


def test_the_built_in_catalog_goes_through_the_same_rules(tmp_path: Path) -> None:
    raw = yaml.safe_load(CATALOG_FILE.read_text(encoding="utf-8"))
    load_catalog.cache_clear()
    assert len(load_catalog().models) == len(raw["models"])
    raw["migGeometries"]["four-slice"]["slots"]["2g"]["starts"] = [0, 1]  # A30's 2g overlaps
    broken = tmp_path / "gpus.yaml"
    broken.write_text(yaml.safe_dump(raw), encoding="utf-8")
    with pytest.raises(
        CatalogError, match=r"A30: mig.profiles.2.starts.1: .* overlaps the one at 0"
    ):
        load_catalog(broken)
    raw["migGeometries"]["four-slice"]["slots"]["2g"]["starts"] = [0, 2]
    raw["models"][-1]["aliases"] = ["nvidia-l4"]  # L40S takes L4's alias
    broken.write_text(yaml.safe_dump(raw), encoding="utf-8")
    with pytest.raises(
        CatalogError, match=r"L40S: aliases.0: 'nvidia-l4' already names GPU model L4"
    ):
        load_catalog(broken)


def test_a_team_s_file_may_not_describe_a_model(write_policies: PolicyWriter) -> None:
    """A model changes what every team's tiers select: it is the platform's to write."""
    files = {
        "clusters/c1.yaml": fleets.cluster(),
        "tiers/whole.yaml": fleets.tier("whole", "{select: {models: [H100]}}"),
        "ladder.yaml": fleets.LADDER,
        "grants/a.yaml": fleets.HEADER
        + "kind: TeamGrant\nmetadata: {name: a}\nspec:\n  namespaces: [a]\n"
        + "  quotas: [{tier: whole, guaranteed: 8}]\n",
        "teams/a.yaml": fleets.HEADER + "kind: Team\nmetadata: {name: a}\n---\n" + RTX,
    }
    (refusal,) = _refusals(write_policies(files, migrate=False))
    assert refusal.code == "GF124" and "GpuModel 'rtx-pro-6000'" in refusal.message
