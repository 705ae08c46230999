"""Each cluster's inputs named by the bytes of the files they were read from, so that a
compile with the cache fingerprints a cluster's resolved inputs only when one of those files
changed.

The key of a cluster's cached result holds the fingerprint of its resolved inputs
(compiler.cache.clusters), a walk of some 3,000 values per cluster that every compile with the
cache takes. Yet resolve makes each cluster of a few documents only (compiler.resolve.resolver):

- its own Cluster document;
- the grant of each team present in it, and that team's own file (or the lack of one);
- the fleet-wide documents: every policy object that is neither a Cluster, a TeamGrant nor a
  Team (tiers, GPU models, device taints, the priority ladder, the Fleet, and any kind added
  later, which therefore counts without a change here).

A document is a function of its file's bytes, its origin (which emit writes in provenance
annotations) and its index in the file; a policy object, of its document and the compiler.
So a hash of those documents' (origin, index, file digest) and the compiler's code digest (the
built-in catalog is part of the code) names the resolved inputs as well as their fingerprint
does, and costs a hash of some 100 short strings. ClusterCache keeps the fingerprint under it.

Two safeguards: the names are taken only when every document's bytes are those the compile
key was taken of (PolicySnapshot.changed is false: a file edited while the compile read it is
loaded from other bytes), and which teams are present comes from the resolved cluster itself,
so a grant that starts or stops naming the cluster changes its name. Being coarser than the
fingerprint costs nothing but a fingerprint: a comment edited in a tier file names every
cluster anew, and each is then fingerprinted and found in the cache as before.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable, Iterator, Mapping

from compiler.file_bytes import FileDigest, digest_bytes
from compiler.ir import ResolvedFleet
from compiler.load.document import SourceDocument
from compiler.model import Policies
from compiler.model.policy import PolicyObject

INPUTS_FORMAT = "gpufleet-cluster-inputs/1"
"""Changes whenever what a name is taken of changes."""

PER_CLUSTER = frozenset({"clusters", "grants", "teams"})
"""The fields of Policies whose objects reach only the clusters they name (by the cluster's
name, or by a grant present in it); every other policy object reaches every cluster."""


def input_names(
    policies: Policies, fleet: ResolvedFleet, digests: Mapping[str, FileDigest], code: str
) -> dict[str, str]:
    """Each cluster's name for its resolved inputs (see the module's docstring), by cluster
    name, for `fleet` resolved from `policies`; `digests` has the FileDigest of every policy
    file by its path below the policy directory, as the documents were loaded from. Empty
    when a document's file has no digest there (a document not loaded from those files)."""
    try:
        shared = _hash(INPUTS_FORMAT, code, *_names(_fleet_wide(policies), digests))
        names: dict[str, str] = {}
        for cluster in fleet.clusters:
            documents: list[SourceDocument | None] = [cluster.cluster.source]
            for team in cluster.teams:
                documents.append(team.grant.source)
                documents.append(team.file.source if team.file is not None else None)
            names[cluster.name] = _hash(shared, *_names(documents, digests))
    except KeyError:
        return {}
    return names


def _fleet_wide(policies: Policies) -> Iterator[SourceDocument]:
    """The documents of every policy object outside PER_CLUSTER, in Policies' order."""
    for field in dataclasses.fields(policies):
        if field.name in PER_CLUSTER:
            continue
        value = getattr(policies, field.name)
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, PolicyObject):
                yield item.source


def _names(
    documents: Iterable[SourceDocument | None], digests: Mapping[str, FileDigest]
) -> Iterator[str]:
    """Each document as `origin`, index and its file's digest (`-` for a missing one)."""
    for document in documents:
        if document is None:
            yield "-"
        else:
            digest = digest_bytes(digests[document.relative_path]).hex()
            yield f"{document.origin}\0{document.index}\0{digest}"


def _hash(*parts: str) -> str:
    # each part after its length: two lists of parts never hash alike, whatever characters a
    # file's name holds
    text = "".join(f"{len(part)}:{part}" for part in parts)
    return hashlib.blake2b(text.encode("utf-8", "surrogateescape"), digest_size=20).hexdigest()
