"""Packing patterns: a host's limits that no multiset of items can reach change nothing, so
clusters whose nodes differ only there share one enumeration; limits that bind still count."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.solve.packing import HostLimits, Item, Layout, _patterns, _reachable

GIB = 2**30
WHOLE_NODE: Layout = (("gpu", ((frozenset(), 1),) * 8),)
"""Eight untainted GPUs, one device each."""


def enumerate_patterns(host: HostLimits, items: tuple[Item, ...]) -> object:
    """The patterns of WHOLE_NODE for `host`, enumerated afresh (not remembered)."""
    return _patterns.__wrapped__(WHOLE_NODE, host, items)


def gang(size: int, memory_gib: int, cores: int) -> Item:
    return Item("gpu", size, memory_gib * GIB, cores * 1000, frozenset(), 8)


items_st = st.lists(
    st.builds(gang, st.sampled_from([1, 2, 4, 8]), st.integers(0, 256), st.integers(0, 32)),
    min_size=1,
    max_size=4,
    unique=True,
).map(lambda found: tuple(sorted(found)))


@settings(max_examples=200, deadline=None)
@given(items_st, st.integers(0, 4096), st.integers(0, 512))
def test_a_host_lowered_to_what_items_can_reach_packs_the_same(
    items: tuple[Item, ...], memory_gib: int, cores: int
) -> None:
    host = HostLimits(memory_gib * GIB, cores * 1000)
    reachable = _reachable(host, WHOLE_NODE, items)
    assert reachable.memory <= host.memory and reachable.cpu_millis <= host.cpu_millis
    assert enumerate_patterns(reachable, items) == enumerate_patterns(host, items)


def test_hosts_that_differ_only_beyond_reach_share_a_key_and_binding_ones_do_not() -> None:
    items = (gang(1, 64, 8), gang(8, 128, 12))
    # at most 8 GPUs of 128 GiB and 12 cores: 1 TiB and 96 cores
    assert _reachable(HostLimits(2048 * GIB, 224_000), WHOLE_NODE, items) == HostLimits(
        1024 * GIB, 96_000
    )
    assert _reachable(HostLimits(3072 * GIB, 256_000), WHOLE_NODE, items) == HostLimits(
        1024 * GIB, 96_000
    )
    tight = HostLimits(512 * GIB, 224_000)  # room for 8 GPUs at 64 GiB, 4 at 128 GiB
    assert _reachable(tight, WHOLE_NODE, items) == HostLimits(512 * GIB, 96_000)
    assert enumerate_patterns(tight, items) != enumerate_patterns(
        HostLimits(1024 * GIB, 96_000), items
    )
