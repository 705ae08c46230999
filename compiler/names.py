"""Kubernetes name rules and the one way gpufleet shortens a name that is too long.

A node name (and so a DRA pool name) is a DNS-1123 subdomain of up to 253 characters
(k8s.io/apimachinery `IsDNS1123Subdomain`: dot-separated labels of lower-case letters, digits
and `-`, each starting and ending with a letter or digit; `PoolNameMaxLength` is the same 253).
Names gpufleet composes from such parts (a DeviceTaintRule per taint and node, the file that
holds it) can exceed the limit of what they name: `shortened` keeps a readable prefix and
appends a digest of the whole name, so the same name always gives the same output and two
different names give different outputs (barring a SHA-256 collision on 48 bits).
"""

from __future__ import annotations

import hashlib
import re

DNS_SUBDOMAIN_MAX = 253
"""Object names of most kinds, node names, DRA pool names."""
DNS_LABEL_MAX = 63
"""Names of namespaced objects of some kinds, label values, each label of a subdomain."""
FILE_NAME_MAX = 255
"""Bytes in one path component on Linux (NAME_MAX) and most other file systems."""

DNS_SUBDOMAIN_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
"""A DNS-1123 subdomain as Kubernetes checks it (the length is checked separately)."""
_DNS_SUBDOMAIN = re.compile(DNS_SUBDOMAIN_PATTERN)

DIGEST_LENGTH = 12
"""Hex digits of SHA-256 appended to a shortened name."""


def is_dns_subdomain(name: str) -> bool:
    """Whether `name` is a valid DNS-1123 subdomain (a node name, an object name)."""
    return len(name) <= DNS_SUBDOMAIN_MAX and _DNS_SUBDOMAIN.match(name) is not None


def shortened(name: str, limit: int) -> str:
    """`name` itself when it has at most `limit` characters, else its first characters and a
    digest of the whole: stable (a pure function of `name`) and still a valid DNS name when
    `name` was one (the cut never ends on `-` or `.`)."""
    if len(name) <= limit:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:DIGEST_LENGTH]
    return f"{name[: limit - DIGEST_LENGTH - 1].rstrip('-.')}-{digest}"
