"""Each cluster's plan and objects from earlier compiles, so that a compile solves and emits
only the clusters whose inputs changed.

A cluster's result is a pure function of what solve and emit read: the cluster's resolved
policy, the fleet-wide objects emit sees (the Fleet and the priority ladder), the cluster's
previous plan (the solver keeps its MIG layouts), the solver's time limits and the compiler
itself. The entry's key is a fingerprint of exactly those (compiler.cache.fingerprint), so a
one-team edit re-solves and re-emits the clusters that team is in and reuses the rest.

Of the previous plan, the key holds what steers the solver (`Steering`: the node labels). A
compile that starts from plan X and solves plan P stores P under the key with X; when P's
labels differ from X's it stores P under the key with P as well, because the next compile
reads P back as its previous plan and compiling from the written plan gives that plan
again (the solver's last objective is canonical: `compiler.solve.solver._canonical`). Without
that second entry, every cluster would miss once after each compile that changed its plan.

An entry, `<cache directory>/clusters/<key>`, is a pickle of its key, the nodes the plan
changes, the result's head (a pickle of its plan, synced kinds and file digests) and its
files' texts packed (a zlib-compressed pickle, with its CRC-32), both made once for both
keys. A compile reads the head; the texts stay packed (PackedTexts) until one of them is
read, which a compile whose out/ already holds the cluster's files never does: the write
compares those files by their digests. An entry is written to a temporary file and renamed
(compiler.cache.files), so concurrent runs each leave a whole entry; anything unreadable, or
texts whose CRC-32 is not the one kept, is a miss. The least recently used entries beyond
MIN_ENTRIES or 4 per cluster are deleted after each store, in batches (files.prune_files).
The directory is the user's own, like ~/.cache in general: an entry is trusted as far as the
account that wrote it.
"""

from __future__ import annotations

import pickle
import re
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from compiler.cache.files import has_file, prune_files, put_file, take_file
from compiler.cache.fingerprint import fingerprint
from compiler.cache.key import CompileOptions
from compiler.emit.argocd import SyncedKind
from compiler.file_bytes import FileDigest
from compiler.ir import ClusterPlan, ResolvedCluster, ResolvedFleet, Steering

ENTRY_FORMAT = "gpufleet-cluster-entry/4"
"""Changes whenever an entry's contents or its key's parts change."""

MIN_ENTRIES = 256
"""The least number of entries kept (the limit is MIN_ENTRIES or 4 per cluster, the larger)."""

INPUTS = "inputs"
"""The directory below the entries' that keeps each fingerprint of a cluster's resolved
inputs under its inputs' name (compiler.cache.inputs), pruned like the entries."""

_FINGERPRINT = re.compile(rb"[0-9a-f]{40}")


@dataclass(frozen=True)
class ClusterResult:
    """What solve and emit made of one cluster: its plan, its files below out/ and the kinds
    of object Argo CD syncs for it."""

    plan: ClusterPlan
    files: Mapping[str, str]
    """Path below out/ -> text: a dict, or PackedTexts for a result read from the cache."""
    synced: tuple[SyncedKind, ...]
    digests: dict[str, FileDigest] = field(default_factory=dict)
    """Each file's FileDigest, for a result kept in the cache (else none): a write compares
    a reused cluster's files with out/'s by these, without encoding and hashing them again."""


class PackedTexts(Mapping[str, str]):
    """A cached result's texts by path, unpacked (all at once) when the first is read."""

    def __init__(self, paths: Iterable[str], packed: bytes) -> None:
        self._paths = dict.fromkeys(paths)
        self._packed = packed
        self._texts: dict[str, str] | None = None

    def __getitem__(self, path: str) -> str:
        if self._texts is None:
            self._texts = pickle.loads(zlib.decompress(self._packed))
        return self._texts[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)

    def __contains__(self, path: object) -> bool:
        return path in self._paths


@dataclass(frozen=True)
class ClusterCache:
    """The per-cluster entries in `directory` as one compile with `options` by the compiler
    whose code_digest is `code` sees them."""

    directory: Path
    options: CompileOptions
    code: str
    names: Mapping[str, str] = field(default_factory=dict)
    """Each cluster's name for its resolved inputs (compiler.cache.inputs), by cluster name:
    the fingerprint of inputs named before is read from INPUTS rather than taken."""
    _inputs: dict[int, tuple[ResolvedCluster, str]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    """The fingerprint of each cluster's inputs, found once per compile (stored_key and store
    both need it), with the cluster it is of (so that its id is not reused meanwhile)."""

    def named(self, names: Mapping[str, str]) -> ClusterCache:
        """This cache, with `names` for the clusters' inputs (see `names`)."""
        return replace(self, names=names)

    def key(self, cluster: ResolvedCluster, fleet: ResolvedFleet, previous: Steering | None) -> str:
        """The key of `cluster`'s result when compiled over the `previous` plan."""
        known = self._inputs.get(id(cluster))
        if known is None or known[0] is not cluster:
            known = (cluster, self._fingerprint(cluster, fleet))
            self._inputs[id(cluster)] = known
        return fingerprint(ENTRY_FORMAT, self.code, repr(self.options), known[1], previous)

    def _fingerprint(self, cluster: ResolvedCluster, fleet: ResolvedFleet) -> str:
        """The fingerprint of `cluster`'s resolved inputs, as kept under their name, or taken
        (and kept, when they have a name)."""
        name = self.names.get(cluster.name)
        if name is not None:
            kept = take_file(self.directory / INPUTS, name)
            if kept is not None and _FINGERPRINT.fullmatch(kept):
                return kept.decode("ascii")
        found = fingerprint(cluster, fleet.ladder, fleet.fleet)
        if name is not None:
            put_file(self.directory / INPUTS, name, found.encode("ascii"))
        return found

    def stored_key(
        self, cluster: ResolvedCluster, fleet: ResolvedFleet, previous: Steering | None
    ) -> str | None:
        """The key of `cluster`'s result compiled over the `previous` plan, if an entry is
        stored under it (to `read`: it may yet be unreadable); None if none is."""
        key = self.key(cluster, fleet, previous)
        return key if has_file(self.directory, key) else None

    def read(self, key: str, cluster: str) -> ClusterResult | None:
        """The result of `cluster` stored under `key`, if it reads back whole."""
        data = take_file(self.directory, key)
        if data is None:
            return None
        try:
            format_, stored_key, changed, head, texts, crc = pickle.loads(data)
            if format_ != ENTRY_FORMAT or stored_key != key or zlib.crc32(texts) != crc:
                return None
            plan, synced, digests = pickle.loads(head)
        except Exception:  # any unreadable entry (cut short, another format) is a miss
            return None
        if not isinstance(plan, ClusterPlan) or plan.cluster != cluster or not digests:
            return None
        files = PackedTexts(digests, texts)
        return ClusterResult(replace(plan, changed_nodes=changed), files, synced, digests)

    def store(
        self,
        fleet: ResolvedFleet,
        previous: Mapping[str, Steering],
        results: Mapping[str, ClusterResult],
    ) -> None:
        """Keep the results of freshly compiled clusters (see the module's docstring for the
        two keys of each); a cache that cannot be written stays as it was."""
        for cluster in fleet.clusters:
            result = results.get(cluster.name)
            if result is None:
                continue
            before = previous.get(cluster.name)
            # the head and texts are packed once for both keys; only the nodes changed differ
            plan = replace(result.plan, changed_nodes=())
            head = pickle.dumps((plan, result.synced, result.digests), protocol=5)
            texts = zlib.compress(pickle.dumps(dict(result.files), protocol=5), 1)
            packed = (head, texts, zlib.crc32(texts))
            self._write(self.key(cluster, fleet, before), result.plan.changed_nodes, packed)
            if before != result.plan.steering:
                self._write(self.key(cluster, fleet, result.plan.steering), (), packed)
        keep = max(MIN_ENTRIES, 4 * len(fleet.clusters))
        prune_files(self.directory, keep)
        prune_files(self.directory / INPUTS, keep)

    def _write(self, key: str, changed: tuple[str, ...], packed: tuple[bytes, bytes, int]) -> None:
        """Store under `key` a packed result (head, texts and the texts' CRC-32) whose plan
        changes the nodes `changed`."""
        data = pickle.dumps((ENTRY_FORMAT, key, changed, *packed), protocol=5)
        put_file(self.directory, key, data)
