"""Catalog matching of the dump's GPUs: productName first, then architecture, compute capability
and memory within the driver's tolerance; unknown models say which GpuModel to add. The
expected models come from the driver's reference table (../shared/reference/nvidia-gpus.md)."""

from __future__ import annotations

import yaml

from compiler.catalog import load_catalog
from compiler.catalog.driver import NVIDIA_DRIVER, releases_publishing
from compiler.inventory.gpus import GpuIdentity
from compiler.inventory.matching import match_model, model_by_label, model_document
from compiler.model.gpu_model import GpuModelSpec

CATALOG = load_catalog()


def _model(identity: GpuIdentity) -> str | None:
    found = match_model(CATALOG, identity)
    return found.id if found else None


def test_the_product_name_decides() -> None:
    for product, expected in [
        ("NVIDIA H100 80GB HBM3", "H100-80GB"),
        ("NVIDIA A100-SXM4-80GB", "A100-80GB"),
        ("NVIDIA H200", "H200"),
        ("NVIDIA B200", "B200"),
        ("NVIDIA L40S", "L40S"),
    ]:
        # even with attributes that would say something else: the name is NVML's own
        assert _model(GpuIdentity(product, "Volta", "7.0", 16384)) == expected, product


def test_an_unknown_name_falls_back_to_architecture_capability_and_memory() -> None:
    oem = GpuIdentity("NVIDIA H100 80GB HBM3 OEM-X", "Hopper", "9.0", 81559)
    assert _model(oem) == "H100-80GB"
    # an older driver's 40537 MiB for an A100 40GB (the catalog says 40960): within tolerance
    assert _model(GpuIdentity("A100 rev B", "Ampere", "8.0", 40537)) == "A100-40GB"
    # 79 GiB is 1% from 81920 (A100 80GB) and 0.8% from 81559 (H100): the architecture picks
    assert _model(GpuIdentity("X", "Ampere", "8.0", 80896)) == "A100-80GB"


def test_no_fallback_outside_the_tolerance_or_without_memory() -> None:
    assert _model(GpuIdentity("X", "Hopper", "9.0", 70000)) is None
    assert _model(GpuIdentity("X", "Hopper", "9.0", None)) is None  # a GPU in MIG mode
    assert _model(GpuIdentity("X", "Hopper", "8.9", 81559)) is None
    # an alias is no product name: `h100` is a catalog alias, not what NVML calls a GPU
    assert _model(GpuIdentity("h100", None, None, None)) is None


def test_node_labels_name_models_with_dashes() -> None:
    assert model_by_label(CATALOG, "NVIDIA-H100-80GB-HBM3").id == "H100-80GB"  # type: ignore[union-attr]
    assert model_by_label(CATALOG, "NVIDIA-L40S").id == "L40S"  # type: ignore[union-attr]
    assert model_by_label(CATALOG, "NVIDIA-Unknown") is None


def test_the_unknown_model_document_is_a_gpu_model_once_its_pci_id_is_added() -> None:
    identity = GpuIdentity(
        "NVIDIA RTX PRO 6000 Blackwell Server Edition", "Blackwell", "12.0", 97887
    )
    document = yaml.safe_load(model_document(identity, None))
    assert document["kind"] == "GpuModel"
    assert document["metadata"]["name"] == "rtx-pro-6000-blackwell-server-edition"
    assert document["spec"]["cudaComputeCapability"] == "12.0"  # a string, not 12.0 the float
    spec = GpuModelSpec.model_validate({**document["spec"], "pciDeviceId": "0x2BB5"})
    assert spec.memory_mib == 97887 and spec.product_name == identity.product_name


def test_a_mig_gpu_takes_its_memory_from_the_node_label() -> None:
    identity = GpuIdentity("NVIDIA H300", "Hopper", "9.0", None)
    document = yaml.safe_load(model_document(identity, "150000"))
    assert document["spec"]["memoryMiB"] == 150000
    assert "memoryMiB" not in yaml.safe_load(model_document(identity, None))["spec"]


def _names(*names: str) -> frozenset[str]:
    return frozenset(n if "/" in n else f"{NVIDIA_DRIVER}/{n}" for n in names)


COMMON = ("type", "uuid", "productName", "brand", "architecture", "cudaComputeCapability")
COMMON += ("driverVersion", "cudaDriverVersion", "resource.kubernetes.io/pcieRoot")


def test_the_attribute_sets_tell_the_driver_releases_apart() -> None:
    previous_oldest = _names(*COMMON, "index", "minor", "pcieBusID")
    previous = _names(*COMMON, "pcieBusID")
    current = _names(*COMMON, "resource.kubernetes.io/pciBusID")
    assert releases_publishing(NVIDIA_DRIVER, "gpu", previous_oldest) == ("25.3",)
    assert releases_publishing(NVIDIA_DRIVER, "gpu", previous) == ("25.8",)
    assert releases_publishing(NVIDIA_DRIVER, "gpu", current) == ("25.12", "0.4", "0.5")
    numa = current | {"resource.kubernetes.io/numaNode"}
    assert releases_publishing(NVIDIA_DRIVER, "gpu", numa) == ("0.5",)
