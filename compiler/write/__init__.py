"""Write: put the output tree in place atomically, pruning only the files gpufleet owns."""

from compiler.write.writer import (
    OWNED_LIST,
    OutputConflict,
    Staleness,
    compare_tree,
    owned_files,
    with_listing,
    write_tree,
)

__all__ = [
    "OWNED_LIST",
    "OutputConflict",
    "Staleness",
    "compare_tree",
    "owned_files",
    "with_listing",
    "write_tree",
]
