"""How a pool's nodes are named, as far as a pattern says without expanding it.

A pool names its nodes by a pattern (`{cluster}-{pool}-{index}`) or lists them. Every name of
a pattern starts with the fixed text before its first `{index}` and ends with the text after
its last: the admission policies recognise a GPU node by those (a pool may have 100,000
nodes), and resolve.node_names finds a node by name and checks that no name is used twice.
"""

from __future__ import annotations

from dataclasses import dataclass

INDEX = "{index}"
"""Where a pattern puts the node's index."""


def fixed_prefix(pattern: str) -> str:
    """The fixed text before the first `{index}` of a filled-in pattern (every name starts so)."""
    return pattern.partition(INDEX)[0]


def fixed_suffix(pattern: str) -> str:
    """The fixed text after the last `{index}` of a filled-in pattern (every name ends so)."""
    return pattern.rpartition(INDEX)[2] if INDEX in pattern else ""


@dataclass(frozen=True)
class NodeNames:
    """The node names of one pool: the names it lists, or a prefix and a suffix around the
    node index of its pattern."""

    pool: str
    prefix: str
    suffix: str
    listed: tuple[str, ...] | None = None
