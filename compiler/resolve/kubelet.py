"""Check a cluster's kubelet settings against its node pools."""

from __future__ import annotations

from collections.abc import Iterator

from compiler.diagnostics import Diagnostic
from compiler.ir import ResolvedCluster, allocatable, reserved
from compiler.quantity import format_bytes, format_decimal
from compiler.resolve.check import cluster_check


@cluster_check("GF226")
def check_kubelet(cluster: ResolvedCluster) -> Iterator[Diagnostic]:
    """GF226 where reservations plus the eviction threshold leave a pool's nodes no CPU or
    memory to allocate.

    Examples (FAIL and PASS): docs/diagnostics/GF226.md."""
    kubelet = cluster.cluster.spec.kubelet
    kept = reserved(kubelet)
    source = cluster.cluster.source
    for pool in cluster.pools:
        left = allocatable(pool.pool, kubelet)
        short = []
        if left.memory <= 0:
            short.append(
                f"memory: {format_bytes(kept.memory)} reserved and kept for eviction, the node "
                f"has {format_bytes(pool.pool.host_memory)}"
            )
        if left.cpu <= 0:
            short.append(
                f"cpu: {format_decimal(kept.cpu)} reserved, the node has "
                f"{format_decimal(pool.pool.cpu)}"
            )
        if short:
            yield Diagnostic(
                "GF226",
                f"cluster {cluster.name}: the kubelet reservations leave nodes of pool "
                f"{pool.pool.name!r} nothing to allocate ({'; '.join(short)})",
                source.span(("spec", "kubelet")),
                ("lower systemReserved, kubeReserved or evictionHardMemory",),
            )
