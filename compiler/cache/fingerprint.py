"""A digest of resolved values that is the same in every run that resolves the same policy.

The key of one cluster's cached plan and objects (compiler.cache.clusters) is this digest of
what solve and emit read: the cluster's resolved policy, the fleet-wide objects emit sees and
the previous plan. It is taken from the values themselves, not from the files they came
from, so an edit to one team's file changes only the keys of the clusters the team is in.

What counts:

- plain data, tuples, lists, dicts (in their order: emit writes in that order) and sets (in
  sorted order of their members' digests: their iteration order changes from run to run);
- a dataclass by its class and every field; an enum by its class and value;
- a policy object (pydantic model) by its class, its validated values (`model_dump_json`)
  and the origin of the document it came from, which emit writes in provenance annotations;
- a source document by its origin, index and data.

Positions (line and column, `Span`) do not count: they only place diagnostics, and a cluster
whose solve or emit reports a problem is never cached. Any other type is a TypeError, so that
a new kind of value in the IR cannot silently fall out of the key.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
from typing import Any

from pydantic import BaseModel

from compiler.diagnostics import Span
from compiler.load.document import SourceDocument


def fingerprint(*values: Any) -> str:
    """The hex digest of `values` (see the module's docstring for what counts)."""
    encoder = _Encoder()
    for value in values:
        encoder.add(value)
    return encoder.digest.hexdigest()


class _Encoder:
    """Feeds one value graph into a digest; an object met again is written as a back-reference
    (the IR shares a team between all of its guarantees)."""

    def __init__(self) -> None:
        self.digest = hashlib.blake2b(digest_size=20)
        self.seen: dict[int, int] = {}
        self.kept: list[Any] = []  # keeps every seen object alive, so no id() is reused

    def write(self, tag: bytes, text: str = "") -> None:
        data = text.encode("utf-8", "surrogateescape")
        self.digest.update(tag + len(data).to_bytes(4, "little") + data)

    def add(self, value: Any) -> None:
        if value is None or isinstance(value, bool | int | float | str):
            self.write(b"v", f"{type(value).__name__}:{value!r}")
        elif isinstance(value, tuple | list):
            self.write(b"[", str(len(value)))
            for item in value:
                self.add(item)
        elif isinstance(value, dict):
            self.write(b"{", str(len(value)))
            for key, item in value.items():
                self.add(key)
                self.add(item)
        elif isinstance(value, frozenset | set):
            self.write(b"s", ",".join(sorted(fingerprint(item) for item in value)))
        elif isinstance(value, enum.Enum):
            self.write(b"e", f"{type(value).__qualname__}.{value.value!r}")
        elif isinstance(value, Span):
            self.write(b"p")
        elif self._met_before(value):
            return
        elif isinstance(value, BaseModel):
            self.write(b"m", type(value).__qualname__)
            self.write(b"j", value.model_dump_json())
            private = value.__pydantic_private__ or {}
            source = private.get("_source")
            self.write(b"o", source.origin if isinstance(source, SourceDocument) else "")
        elif isinstance(value, SourceDocument):
            self.write(b"d", f"{value.origin}#{value.index}")
            self.add(value.data)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            self.write(b"c", type(value).__qualname__)
            for field in dataclasses.fields(value):
                self.add(getattr(value, field.name))
        else:
            raise TypeError(f"no fingerprint for a {type(value).__qualname__}")

    def _met_before(self, value: Any) -> bool:
        """Whether `value` was added before (then a back-reference is written)."""
        number = self.seen.get(id(value))
        if number is not None:
            self.write(b"@", str(number))
            return True
        self.seen[id(value)] = len(self.kept)
        self.kept.append(value)
        return False
