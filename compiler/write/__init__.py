"""Write: put the output tree in place atomically, pruning only the files gpufleet owns."""

from compiler.write.writer import OWNED_LIST, Staleness, compare_tree, write_tree

__all__ = ["OWNED_LIST", "Staleness", "compare_tree", "write_tree"]
