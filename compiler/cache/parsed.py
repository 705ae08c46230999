"""Policy files parsed by earlier compiles, so that a compile parses only the files that
changed (the loader's ParsedFiles).

An entry is what the loader made of one file: its documents, with every node's position. It
is a pure function of the file's bytes, the names the file is shown and annotated by, and
the loader's code, so its key is a hash of exactly those (the bytes by their FileDigest, which
the policy directory's index may have without reading them; the compiler's code digest
stands for the loader). A file that fails to load is never kept, so its diagnostics are found
again. Entries are pickles in `<cache directory>/parsed/<key>`, written to a temporary file
and renamed (worker processes may write at once); anything unreadable is a miss, and the
least recently used entries beyond twice the policy files of the last compile (at least
MIN_ENTRIES) are deleted after it, in batches (compiler.cache.files.prune_files).
"""

from __future__ import annotations

import hashlib
import pickle
from dataclasses import dataclass
from pathlib import Path

from compiler.cache.files import prune_files, put_file, take_file
from compiler.file_bytes import FileDigest, digest_bytes
from compiler.load.document import SourceDocument

ENTRY_FORMAT = "gpufleet-parsed-file/2"
MIN_ENTRIES = 1024


@dataclass(frozen=True)
class ParsedFileCache:
    """Parsed policy files in `directory`, for the compiler whose code_digest is `code`."""

    directory: Path
    code: str

    def key(self, digest: FileDigest, shown: str, origin: str) -> str:
        """The key of parsing the bytes whose FileDigest is `digest` as file `shown`,
        annotated as `origin`."""
        hashed = hashlib.blake2b(digest_size=20)
        for part in (ENTRY_FORMAT, self.code, shown, origin):
            hashed.update(part.encode("utf-8", "surrogateescape") + b"\0")
        hashed.update(digest_bytes(digest))
        return hashed.hexdigest()

    def get(self, digest: FileDigest, shown: str, origin: str) -> list[SourceDocument] | None:
        """What parsing the bytes of `digest` as `shown` (`origin`) gave before, or None."""
        data = take_file(self.directory, self.key(digest, shown, origin))
        if data is None:
            return None
        try:
            documents = pickle.loads(data)
        except Exception:  # any unreadable entry (cut short, another format) is a miss
            return None
        if not isinstance(documents, list) or not all(
            isinstance(d, SourceDocument) for d in documents
        ):
            return None
        return documents

    def put(
        self, digest: FileDigest, shown: str, origin: str, documents: list[SourceDocument]
    ) -> None:
        """Keep what parsing the bytes of `digest` as `shown` (`origin`) gave; a cache that
        cannot be written stays as it was."""
        data = pickle.dumps(documents, protocol=5)
        put_file(self.directory, self.key(digest, shown, origin), data)

    def prune(self, files: int) -> None:
        """Prune to the most recently used entries, twice `files` (the policy files of the
        compile that just ran) and at least MIN_ENTRIES, in batches (files.prune_files)."""
        prune_files(self.directory, max(MIN_ENTRIES, 2 * files))
