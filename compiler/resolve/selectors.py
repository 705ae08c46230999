"""Turn a tier's selector into the CEL expression its DeviceClass carries."""

from __future__ import annotations

import json
from functools import cache

from compiler.catalog import Catalog, GpuModel
from compiler.catalog.driver import attribute_types
from compiler.cel.device_types import DeviceSchema
from compiler.model.policy import GpuTier
from compiler.quantity import format_bytes


class UnknownModel(ValueError):
    """A selector names a GPU model or family the catalog does not know."""

    def __init__(self, index: int, name: str) -> None:
        super().__init__(name)
        self.index, self.name = index, name


def selected_models(tier: GpuTier, catalog: Catalog) -> list[GpuModel]:
    """The catalog models a structured selector names (every model when it names none)."""
    if not tier.spec.select.models:
        return list(catalog.models)
    chosen: dict[str, GpuModel] = {}
    for index, name in enumerate(tier.spec.select.models):
        members = catalog.family(name)
        if not members:
            raise UnknownModel(index, name)
        for model in members:
            chosen[model.id] = model
    return sorted(chosen.values(), key=lambda m: m.id)


def _string(value: str) -> str:
    return json.dumps(value)


def _string_list(values: list[str]) -> str:
    return "[" + ", ".join(_string(v) for v in values) + "]"


def selector_expression(tier: GpuTier, catalog: Catalog, driver: str) -> str:
    """The DeviceClass CEL expression for a tier: its raw `cel`, or one built from its fields."""
    select = tier.spec.select
    attrs = f"device.attributes[{_string(driver)}]"
    terms = [f"device.driver == {_string(driver)}"]
    if select.cel is not None:
        return select.cel
    if tier.spec.partition is not None:
        terms.append(f'{attrs}.type == "mig"')
        terms.append(f"{attrs}.profile == {_string(tier.spec.partition)}")
    else:
        terms.append(f'{attrs}.type == "gpu"')
    if select.models:
        names = sorted({m.product_name for m in selected_models(tier, catalog)})
        terms.append(f"{attrs}.productName in {_string_list(names)}")
    if select.architectures:
        terms.append(f"{attrs}.architecture in {_string_list(list(select.architectures))}")
    if select.min_memory is not None:
        minimum = _string(format_bytes(select.min_memory))
        memory = f"device.capacity[{_string(driver)}].memory"
        terms.append(f"{memory}.compareTo(quantity({minimum})) >= 0")
    return " &&\n".join(terms)


@cache
def device_schema(driver: str) -> DeviceSchema:
    """The types a selector's `device` has on a cluster whose DRA driver is named `driver`:
    its attributes as the NVIDIA driver's table types them, every capacity a quantity."""
    return DeviceSchema.of(attribute_types(driver))
