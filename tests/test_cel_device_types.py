"""A selector's device capacity is a Kubernetes Quantity and its attributes have the types the
driver publishes them with, so a comparison of the wrong types is an error when the selector is
checked, located at the comparison, with the right form in the hint (issue 18: `memory >
"40Gi"` was accepted and compared strings; `cudaComputeCapability == "9.0"` was silently false).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler.catalog import load_catalog
from compiler.catalog.driver import attribute_types
from compiler.cel import CelCompileError, compile_expression
from compiler.cel.device_types import DeviceSchema, compile_selector
from compiler.diagnostics import CompileError
from compiler.load import load_policies
from compiler.model import build_policies
from compiler.resolve import resolve
from tests import fleets

NVIDIA = DeviceSchema.of(attribute_types("gpu.nvidia.com"))
MEMORY = 'device.capacity["gpu.nvidia.com"].memory'
CAPABILITY = 'device.attributes["gpu.nvidia.com"].cudaComputeCapability'


def rejected(source: str) -> CelCompileError:
    """The error checking `source` as a selector raises (it must raise one)."""
    with pytest.raises(CelCompileError) as caught:
        compile_selector(source, NVIDIA)
    return caught.value


def column_of(source: str, text: str) -> int:
    """The 1-based column where `text` first starts on the first line of `source`."""
    return source.index(text) + 1


@pytest.mark.parametrize(
    ("source", "operator", "right_form"),
    [
        (
            f'{MEMORY} > "40Gi"',
            ">",
            f'{MEMORY}.compareTo(quantity("40Gi")) > 0',
        ),
        (
            f'"40Gi" <= {MEMORY}',
            "<=",
            f'{MEMORY}.compareTo(quantity("40Gi")) >= 0',
        ),
        (
            f"{MEMORY} == 42949672960",
            "==",
            f'{MEMORY}.compareTo(quantity("42949672960")) == 0',
        ),
        (
            'device.capacity["gpu.nvidia.com"]["memory"] < "1Ti"',
            "<",
            'device.capacity["gpu.nvidia.com"]["memory"].compareTo(quantity("1Ti")) < 0',
        ),
        (
            f'{CAPABILITY} >= "8.0"',
            ">=",
            f'{CAPABILITY}.compareTo(semver("8.0.0")) >= 0',
        ),
        (
            f'{CAPABILITY} == "9.0.0"',
            "==",
            f'{CAPABILITY}.compareTo(semver("9.0.0")) == 0',
        ),
        (
            'device.attributes["gpu.nvidia.com"].index == "0"',
            "==",
            'device.attributes["gpu.nvidia.com"].index == 0',
        ),
        (
            'device.attributes["gpu.nvidia.com"].productName != 100',
            "!=",
            'device.attributes["gpu.nvidia.com"].productName != "100"',
        ),
    ],
)
def test_a_comparison_of_the_wrong_types_is_a_check_error_at_the_operator(
    source: str, operator: str, right_form: str
) -> None:
    error = rejected(source)
    assert (error.line, error.column) == (1, column_of(source, f" {operator} ") + 1)
    assert error.hint is not None and right_form in error.hint


def test_a_typed_value_in_a_list_of_another_type_is_rejected() -> None:
    source = f'{CAPABILITY} in ["8.0", "9.0"]'
    error = rejected(source)
    assert error.column == column_of(source, " in ") + 1
    assert error.hint is not None and "semantic version" in error.hint


def test_a_function_of_another_type_on_a_quantity_is_rejected() -> None:
    error = rejected(f'{MEMORY}.startsWith("8")')
    assert error.hint is not None and "quantity" in error.hint


def test_a_typed_access_spanning_lines_keeps_the_column_of_what_follows() -> None:
    source = (
        'device.driver == "gpu.nvidia.com" &&\n'
        '  device\n    .capacity["gpu.nvidia.com"]\n    .memory >= "1"'
    )
    error = rejected(source)
    assert (error.line, error.column) == (4, 13)
    assert error.hint is not None
    assert 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("1")) >= 0' in error.hint


def test_a_non_ascii_character_before_the_access_does_not_move_it() -> None:
    source = f'"é" != "" && {MEMORY} > "40Gi"'
    assert rejected(source).column == column_of(source, " > ") + 1


@pytest.mark.parametrize(
    "source",
    [
        f'{MEMORY}.compareTo(quantity("40Gi")) > 0',
        f'{MEMORY}.isGreaterThan(quantity("40Gi")) && {MEMORY}.sign() == 1',
        f'{CAPABILITY}.compareTo(semver("8.0.0")) >= 0 && {CAPABILITY}.major() >= 8',
        'device.attributes["gpu.nvidia.com"].productName in ["NVIDIA H100 80GB HBM3"]',
        'device.attributes["gpu.nvidia.com"].index == 0',
        'has(device.attributes["gpu.nvidia.com"].profile)',
        'device.attributes["gpu.nvidia.com"].?profile.orValue("") == "3g.40gb"',
        'device.attributes["example.com"].anything == 1',  # another driver's: not typed here
        'device.attributes["resource.kubernetes.io"].numaNode == 0',  # int or list: dyn
        'cel.bind(d, device.attributes["gpu.nvidia.com"], d.productName.startsWith("NVIDIA"))',
    ],
)
def test_well_typed_selectors_compile(source: str) -> None:
    assert compile_selector(source, NVIDIA).result_type in ("bool", "dyn")


def test_a_selector_evaluates_as_it_was_written() -> None:
    source = f'{MEMORY}.compareTo(quantity("40Gi")) > 0'
    assert compile_selector(source, NVIDIA) == compile_expression(source, ("device",))


POOLS = """
    - {name: h100, nodes: 1, gpu: H100-80GB, gpusPerNode: 8, hostMemory: 2Ti, cpu: 224,
       mig: allowed}
    - {name: l40s, nodes: 1, gpu: L40S, gpusPerNode: 4, hostMemory: 512Gi, cpu: 64}
    - {name: a100, nodes: 1, gpu: A100-40GB, gpusPerNode: 8, hostMemory: 1Ti, cpu: 128}
"""


def tier_files(cel: str) -> dict[str, str]:
    """A cluster of three pools and one tier selecting by `cel` (a YAML block scalar)."""
    body = "\n".join("      " + line for line in cel.splitlines())
    return {
        "c.yaml": fleets.cluster(pools=POOLS),
        "t.yaml": fleets.HEADER
        + "kind: GpuTier\nmetadata: {name: big}\nspec:\n  select:\n    cel: |-\n"
        + body
        + "\n",
    }


def test_resolve_reports_a_string_compared_with_a_quantity_at_the_comparison(
    tmp_path: Path,
) -> None:
    root = fleets.write_tree(tmp_path, tier_files(f'{MEMORY} > "40Gi"'), migrate_teams=False)
    with pytest.raises(CompileError) as caught:
        resolve(build_policies(load_policies(root)), load_catalog())
    (found,) = [d for d in caught.value.diagnostics if d.code == "GF301"]
    assert found.span is not None
    assert (found.span.line, found.span.column) == (7, 7 + len(MEMORY) + 1)
    assert any(f'{MEMORY}.compareTo(quantity("40Gi")) > 0' in hint for hint in found.hints)


def test_the_right_quantity_comparison_selects_the_devices_with_more_memory(
    tmp_path: Path,
) -> None:
    files = tier_files(f'{MEMORY}.compareTo(quantity("40Gi")) > 0')
    root = fleets.write_tree(tmp_path, files, migrate_teams=False)
    fleet = resolve(build_policies(load_policies(root)), load_catalog())
    catalog = load_catalog()
    expected = []
    for pool, model_id in (("a100", "A100-40GB"), ("h100", "H100-80GB"), ("l40s", "L40S")):
        model = catalog.lookup(model_id)
        assert model is not None
        if model.memory_bytes > 40 * 2**30:
            expected.append(f"{pool}/gpu")
        if pool == "h100" and model.mig is not None:  # the only pool with mig: allowed
            expected.extend(
                f"{pool}/mig-{p.name}" for p in model.mig.profiles if p.memory_mib > 40 * 2**10
            )
    selected = [str(k.key) for k in fleet.clusters[0].tier("big").kinds]
    assert sorted(selected) == sorted(expected)
    assert "h100/gpu" in selected and "l40s/gpu" in selected and "a100/gpu" not in selected
