"""The GPU catalog: models, the attributes the DRA driver publishes, and MIG geometry."""

from compiler.catalog.builtin import CatalogError, load_catalog
from compiler.catalog.catalog import Board, Catalog, GpuModel, MigGeometry, MigProfile
from compiler.catalog.mig_layouts import MigLayout, enumerate_layouts

__all__ = [
    "Board",
    "Catalog",
    "CatalogError",
    "GpuModel",
    "MigGeometry",
    "MigLayout",
    "MigProfile",
    "enumerate_layouts",
    "load_catalog",
]
