"""The compile cache (issue 20): `compile --check` with nothing changed answers from a record
(compiler.cache.session), and a compile solves and emits only the clusters whose inputs
changed (compiler.cache.clusters, imported where it is used: it needs the emitters, and
answering from a record must not load them)."""

from compiler.cache.key import CompileOptions, code_digest, compile_key
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
    "code_digest",
    "compile_key",
    "out_digest",
    "read_record",
    "write_record",
]
