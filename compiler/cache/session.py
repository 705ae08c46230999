"""One run's use of the compile cache: look the inputs up before compiling, record the
result after.

The key is taken of the policy files as read once, before the compile reads anything else
(or as the policy directory's index vouches for them: compiler.cache.file_index), and the
compile loads those very bytes (compiler.policy_files.PolicySnapshot, handed to it in
compiler.cache.reuse): a policy file edited while the compile runs does not change what it
compiles, so its record holds (the next compile sees the edit, which changes the key). A file
the index vouched for is read only if it must be parsed; if it changed meanwhile, that compile
is not recorded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from compiler.cache.file_index import POLICY_INDEX, FileIndex
from compiler.cache.key import CompileOptions, code_digest, compile_key
from compiler.cache.out_reader import OutReader
from compiler.cache.store import (
    CompileRecord,
    cache_directory,
    file_sha256,
    files_digest,
    read_record,
    write_record,
)
from compiler.diagnostics import Diagnostic, Suppressed
from compiler.file_bytes import FileDigest
from compiler.policy_files import PolicySnapshot, read_policy_files
from compiler.write import with_listing
from compiler.write.writer import digest_of


@dataclass(frozen=True)
class CompileCache:
    """The cache as one compile of `policies` over `out` with `options` sees it."""

    directory: Path
    out: Path
    options: CompileOptions
    code: str
    """The code_digest of the compiler that runs."""
    files: PolicySnapshot = field(compare=False, repr=False)
    """The policy files the key was taken of, for the compile to load."""
    key: str

    @classmethod
    def open(cls, policies: Path, out: Path, options: CompileOptions) -> CompileCache | None:
        """The cache for this compile, or None when its key cannot be computed (a policy
        file that cannot be read: the compile then says why)."""
        code, directory = code_digest(), cache_directory()
        index = FileIndex.open(directory, policies, POLICY_INDEX)
        try:
            files = read_policy_files(policies, index)
            key = compile_key(policies, files, out, options, code)
        except OSError:
            return None
        index.save()
        return cls(directory, out, options, code, files, key)

    def up_to_date(self, reader: OutReader | None = None) -> CompileRecord | None:
        """The record that says out/, as it is now, is what this compile would write (and
        what it would say), or None. `reader`: reading out/ since before the key was taken
        (else out/ is read here)."""
        record = read_record(self.directory, self.key)
        if record is None:
            return None
        if any(file_sha256(Path(path)) != digest for path, digest in record.depends):
            return None
        reader = reader or OutReader(self.directory, self.out)
        if reader.digest() != record.out:
            return None
        reader.keep_index()
        return record

    def remember(
        self,
        tree: Mapping[str, str],
        reported: Sequence[Diagnostic],
        suppressed: Sequence[Suppressed],
        depends: Sequence[Path],
        known: Mapping[str, FileDigest] | None = None,
    ) -> bool:
        """Record that out/ now holds exactly `tree` and its listing of owned files (the
        caller has just written it or found it so, with nothing foreign in out/), compiled
        from the policy files read at open, with what the compile reported and silenced and
        the files outside the policies it read; False when it was not recorded (no writable
        cache directory, or a policy file the compile read again was no longer what the key
        was taken of: PolicySnapshot.read_again). `known` has the FileDigest of some of the
        files (the rest are hashed here)."""
        if self.files.changed:
            return False
        written = with_listing(tree)
        digest = files_digest(written, lambda path: digest_of(path, written, known or {}))
        files = tuple((str(path.absolute()), file_sha256(path)) for path in depends)
        record = CompileRecord(
            self.key, digest, len(tree), tuple(reported), tuple(suppressed), files
        )
        return write_record(self.directory, record)
