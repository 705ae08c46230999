"""The built-in catalog: gpus.yaml read into the same entries a fleet's GpuModel documents are.

gpus.yaml writes each MIG geometry and board once and lets models name them; reading it
expands those into each model's `GpuModelSpec`, which then goes through the rules of
compiler.catalog.entries like any GpuModel document. A built-in entry that breaks one is a bug
in gpufleet's data (CatalogError), found by the tests before anyone compiles with it.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from compiler.catalog.catalog import Catalog, GpuModel
from compiler.catalog.entries import checked_model
from compiler.model.gpu_model import GpuModelSpec

CATALOG_FILE = Path(__file__).with_name("gpus.yaml")


class CatalogError(ValueError):
    """The built-in catalog breaks a rule every GPU model is held to."""


@cache
def load_catalog(path: Path = CATALOG_FILE) -> Catalog:
    """Read and check the catalog data file once per process."""
    raw = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
    models: list[GpuModel] = []
    for entry in raw["models"]:
        try:
            spec = GpuModelSpec.model_validate(builtin_spec(raw, entry))
        except ValidationError as error:
            raise CatalogError(f"{path.name}: model {entry.get('id')}: {error}") from None
        model, problems = checked_model(entry["id"], spec, models)
        if problems:
            listed = "; ".join(
                f"{'.'.join(map(str, p.path)) or 'id'}: {p.message}" for p in problems
            )
            raise CatalogError(f"{path.name}: model {entry['id']}: {listed}")
        models.append(model)
    return Catalog(tuple(models))


def builtin_spec(raw: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    """One model of gpus.yaml as a GpuModel document's `spec` (geometry and boards inlined)."""
    spec = {key: value for key, value in entry.items() if key not in ("id", "mig", "boards")}
    boards = raw.get("boards", {})
    spec["boards"] = [{"name": name, **boards[name]} for name in entry.get("boards", ())]
    if "mig" in entry:
        geometry = raw["migGeometries"][entry["mig"]["geometry"]]
        spec["mig"] = {
            "memorySlices": geometry["memorySlices"],
            "computeSlices": geometry["computeSlices"],
            "profiles": [
                {"name": name, "memoryMiB": memory_mib, **geometry["slots"][slot]}
                for slot, (name, memory_mib) in entry["mig"]["profiles"].items()
            ],
        }
    return spec
