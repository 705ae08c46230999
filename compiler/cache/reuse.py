"""What a compile may take from earlier ones: parsed policy files and clusters' results."""

from __future__ import annotations

from dataclasses import dataclass

from compiler.cache.clusters import ClusterCache
from compiler.cache.parsed import ParsedFileCache
from compiler.cache.session import CompileCache


@dataclass(frozen=True)
class Reuse:
    """The parts of the compile cache a compile reads and adds to (compiler.cache.parsed,
    compiler.cache.clusters)."""

    parsed: ParsedFileCache
    clusters: ClusterCache

    @classmethod
    def of(cls, cache: CompileCache) -> Reuse:
        """The parts below the compile cache `cache` is the view of."""
        return cls(
            ParsedFileCache(cache.directory / "parsed", cache.code),
            ClusterCache(cache.directory / "clusters", cache.options, cache.code),
        )
