"""Which catalog model a GPU of the dump is: by the driver's `productName` first, then by
architecture, compute capability and memory.

The product name is NVML's, which the catalog records for every model (and a fleet's
`GpuModel` documents for theirs), so it decides whenever the catalog knows it. A GPU whose name
the catalog lacks (a new board revision, an OEM name) is taken for the one model of the same
architecture and compute capability whose memory is within the driver's reporting tolerance
(`MEMORY_TOLERANCE`: "80GB" H100s report 81559 MiB, older drivers showed 40537 MiB for an
A100 40GB's 40960). Anything else is unknown: the import prints the `GpuModel` document that
would describe it, from what the dump shows.
"""

from __future__ import annotations

import re
from fractions import Fraction

from compiler.catalog import Catalog, GpuModel
from compiler.inventory.gpus import GpuIdentity
from compiler.model.base import API_VERSION

MEMORY_TOLERANCE = Fraction(2, 100)
"""How far a GPU's reported memory may be from its model's (a share of the model's): the
spread drivers show for one model is about 1%."""


def match_model(catalog: Catalog, identity: GpuIdentity) -> GpuModel | None:
    """The catalog model the GPU is, or None (see the module docstring)."""
    if identity.product_name:
        named = catalog.lookup(identity.product_name)
        if named is not None and named.product_name.lower() == identity.product_name.lower():
            return named
    if identity.architecture is None or identity.compute_capability is None:
        return None
    if identity.memory_mib is None:
        return None
    close = [
        model
        for model in catalog.models
        if model.architecture == identity.architecture
        and model.cuda_compute_capability == identity.compute_capability
        and abs(model.memory_mib - identity.memory_mib) <= model.memory_mib * MEMORY_TOLERANCE
    ]
    return close[0] if len(close) == 1 else None


def model_by_label(catalog: Catalog, product_label: str) -> GpuModel | None:
    """The model GPU feature discovery's `nvidia.com/gpu.product` label names (NVML's name
    with spaces as `-`), for a node whose driver publishes none of its GPUs."""
    return catalog.lookup(product_label) or catalog.lookup(product_label.replace("-", " "))


def model_document(identity: GpuIdentity, memory_label: str | None) -> str:
    """The `GpuModel` document describing an unknown GPU, one line of YAML (flow style), from
    what the dump shows; `memory_label` is the node's `nvidia.com/gpu.memory` (MiB), for a GPU
    in MIG mode whose own memory the driver does not publish."""
    memory = identity.memory_mib
    if memory is None and memory_label is not None and memory_label.isdigit():
        memory = int(memory_label)
    fields = [
        f"productName: {_quoted(identity.product_name or '')}",
        f"architecture: {_quoted(identity.architecture or '')}",
        f"cudaComputeCapability: {_quoted(identity.compute_capability or '')}",
    ]
    if memory is not None:
        fields.append(f"memoryMiB: {memory}")
    return (
        f"{{apiVersion: {API_VERSION}, kind: GpuModel, metadata: {{name: {model_name(identity)}}}, "
        f"spec: {{{', '.join(fields)}}}}}"
    )


def model_name(identity: GpuIdentity) -> str:
    """A DNS-1123 name for an unknown model, from its product name: `NVIDIA RTX PRO 6000
    Blackwell Server Edition` -> `rtx-pro-6000-blackwell-server-edition`."""
    product = (identity.product_name or "unknown-gpu").lower().removeprefix("nvidia ")
    name = re.sub(r"[^a-z0-9]+", "-", product).strip("-")[:63].strip("-")
    return name or "unknown-gpu"


def _quoted(text: str) -> str:
    """A YAML double-quoted string (names and versions: `"12.0"` must stay a string)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'
