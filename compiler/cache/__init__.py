"""The compile cache (issue 20): lets `compile --check` skip solving and emitting when
neither the inputs nor out/ changed since a compile that found (or made) out/ up to date."""

from compiler.cache.key import CompileOptions, compile_key
from compiler.cache.session import CompileCache
from compiler.cache.store import (
    CompileRecord,
    cache_directory,
    out_digest,
    read_record,
    write_record,
)

__all__ = [
    "CompileCache",
    "CompileOptions",
    "CompileRecord",
    "cache_directory",
    "compile_key",
    "out_digest",
    "read_record",
    "write_record",
]
