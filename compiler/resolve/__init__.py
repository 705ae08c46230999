"""Resolve: expand inventory, evaluate tier selectors, check every reference."""

from compiler.resolve.fleet import (
    Guarantee,
    ResolvedCluster,
    ResolvedFleet,
    ResolvedPool,
    TierInCluster,
)
from compiler.resolve.inventory import DeviceKind
from compiler.resolve.resolver import resolve

__all__ = [
    "DeviceKind",
    "Guarantee",
    "ResolvedCluster",
    "ResolvedFleet",
    "ResolvedPool",
    "TierInCluster",
    "resolve",
]
