"""Resolve: expand inventory, evaluate tier selectors, check every reference.

What it produces (the resolved fleet) is defined in compiler.ir.
"""

from compiler.resolve.resolver import resolve

__all__ = ["resolve"]
