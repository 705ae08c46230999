"""Emit: turn the resolved fleet and its plans into rendered manifests."""

from compiler.emit.manifest import Manifest
from compiler.emit.tree import ClusterFiles, assemble_tree

__all__ = ["ClusterFiles", "Manifest", "assemble_tree"]
