"""What a compile may take from earlier ones: parsed policy files and clusters' results."""

from __future__ import annotations

from dataclasses import dataclass

from compiler.cache.clusters import ClusterCache
from compiler.cache.inputs import input_names
from compiler.cache.parsed import ParsedFileCache
from compiler.cache.session import CompileCache
from compiler.ir import ResolvedFleet
from compiler.model import Policies
from compiler.policy_files import PolicySnapshot


@dataclass(frozen=True)
class Reuse:
    """The parts of the compile cache a compile reads and adds to (compiler.cache.parsed,
    compiler.cache.clusters), and the policy files its key was taken of, which the compile
    loads instead of reading the files again."""

    files: PolicySnapshot
    parsed: ParsedFileCache
    clusters: ClusterCache

    @classmethod
    def of(cls, cache: CompileCache) -> Reuse:
        """The parts below the compile cache `cache` is the view of."""
        return cls(
            cache.files,
            ParsedFileCache(cache.directory / "parsed", cache.code),
            ClusterCache(cache.directory / "clusters", cache.options, cache.code),
        )

    def clusters_of(self, policies: Policies, fleet: ResolvedFleet) -> ClusterCache:
        """The cluster cache for `fleet`, resolved from `policies` as loaded from `files`:
        with the names of its clusters' inputs (compiler.cache.inputs), unless a file was
        loaded from other bytes than those its digest is of."""
        if self.files.changed:
            return self.clusters
        names = input_names(policies, fleet, self.files.digests, self.clusters.code)
        return self.clusters.named(names)
