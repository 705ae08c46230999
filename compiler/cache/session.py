"""One run's use of the compile cache: look the inputs up before compiling, record the
result after.

The key is taken before the compile reads anything and again before recording: a policy
file edited while the compile ran changes it, and such a compile is not recorded (its tree
may come from either version of the file).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from compiler.cache.clusters import ClusterCache
from compiler.cache.key import CompileOptions, code_digest, compile_key
from compiler.cache.store import (
    CompileRecord,
    cache_directory,
    files_digest,
    out_digest,
    read_record,
    write_record,
)
from compiler.write import with_listing


@dataclass(frozen=True)
class CompileCache:
    """The cache as one compile of `policies` over `out` with `options` sees it."""

    directory: Path
    policies: Path
    out: Path
    options: CompileOptions
    code: str
    key: str

    @classmethod
    def open(cls, policies: Path, out: Path, options: CompileOptions) -> CompileCache | None:
        """The cache for this compile, or None when its key cannot be computed (a policy
        file that cannot be read: the compile then says why)."""
        code = code_digest()
        try:
            key = compile_key(policies, out, options, code)
        except OSError:
            return None
        return cls(cache_directory(), policies, out, options, code, key)

    @property
    def clusters(self) -> ClusterCache:
        """The per-cluster results of earlier compiles (solve and emit only what changed)."""
        return ClusterCache(self.directory / "clusters", self.options, self.code)

    def up_to_date(self) -> CompileRecord | None:
        """The record that says out/, as it is now, is what this compile would write."""
        record = read_record(self.directory, self.key)
        if record is None or out_digest(self.out) != record.out:
            return None
        return record

    def remember(self, tree: dict[str, str]) -> bool:
        """Record that out/ now holds exactly `tree` and its listing of owned files (the
        caller has just written it or found it so, with nothing foreign in out/); False
        when it was not recorded (inputs changed meanwhile, no writable cache directory)."""
        try:
            unchanged = compile_key(self.policies, self.out, self.options, self.code) == self.key
        except OSError:
            return False
        if not unchanged:
            return False
        written = with_listing(tree).items()
        digest = files_digest((path, text.encode("utf-8")) for path, text in written)
        return write_record(self.directory, CompileRecord(self.key, digest, len(tree)))
