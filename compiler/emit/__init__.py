"""Emit: turn the resolved fleet and its plans into rendered manifests."""

from compiler.emit.manifest import Manifest
from compiler.emit.tree import build_tree

__all__ = ["Manifest", "build_tree"]
