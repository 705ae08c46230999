"""Nodes and GPUs: a declared node the cluster lacks (GF820) or that is not Ready (GF821), a
node publishing fewer GPUs than its pool declares (GF822), and GPU nodes or GPUs the cluster
runs that no pool declares (GF823)."""

from __future__ import annotations

from collections.abc import Iterator

from compiler.catalog.driver import gpu_device_name
from compiler.catalog.node_labels import GPU_COUNT
from compiler.diagnostics import Diagnostic, Span
from compiler.drift.findings import MISSING, NOT_READY, Finding, lost
from compiler.drift.planned import PlannedNode, Published, pool_span
from compiler.inventory.dump import ClusterDump, Node
from compiler.inventory.gpus import NodeGpu
from compiler.ir import ResolvedCluster


def node_findings(
    cluster: ResolvedCluster,
    dump: ClusterDump,
    planned: list[PlannedNode],
    published: Published,
    driver: str,
) -> Iterator[Finding]:
    """GF820, GF821 and GF822 for every declared node; GF823 for GPUs no pool declares."""
    for node in planned:
        found = dump.node(node.name)
        if found is None:
            yield _missing_node(cluster, node, dump.file)
            continue
        if not found.ready:
            yield _not_ready(node, found)
        yield from _gpus(cluster, dump, node, found, published[found.name], driver)
    declared = {n.name for n in planned}
    for found in dump.nodes:
        if found.name not in declared and (gpus := published[found.name]):
            yield _extra_node(cluster, found, gpus)


def _missing_node(cluster: ResolvedCluster, node: PlannedNode, dump: str) -> Finding:
    pool = node.pool.pool
    return Finding(
        Diagnostic(
            "GF820",
            f"node {node.name} ({node.shown}) is not in the cluster: {dump} has no Node of "
            "that name",
            node.span,
            (
                "its GPUs are taken out of the live capacity; if the node is gone for good, "
                f"lower pool {pool.name}'s nodes (or drop the name from its nodeNames)",
            ),
        ),
        node.name,
        (lost(pool.name, node.index, None, MISSING, node.name, node.span),),
    )


def _not_ready(node: PlannedNode, found: Node) -> Finding:
    return Finding(
        Diagnostic(
            "GF821",
            f"node {node.name} ({node.shown}) is not Ready",
            found.span,
            (
                "its GPUs are taken out of the live capacity until the kubelet reports Ready "
                "again (kubectl describe node shows why)",
            ),
            (("the policy declares it here", node.span),),
        ),
        node.name,
        (lost(node.pool.pool.name, node.index, None, NOT_READY, node.name, found.span),),
    )


def _gpus(
    cluster: ResolvedCluster,
    dump: ClusterDump,
    node: PlannedNode,
    found: Node,
    gpus: tuple[NodeGpu, ...],
    driver: str,
) -> Iterator[Finding]:
    pool = node.pool.pool
    width = pool.gpus_per_node
    published = {gpu.name for gpu in gpus}
    expected = [gpu_device_name(i) for i in range(width)]
    missing = [i for i, name in enumerate(expected) if name not in published]
    where = _slice_span(dump, found, driver)
    declared = pool_span(cluster, node.pool, "gpusPerNode")
    if missing:
        names = ", ".join(gpu_device_name(i) for i in missing)
        counted = found.labels.get(GPU_COUNT)
        discovery = f" (GPU feature discovery counts {counted})" if counted else ""
        yield Finding(
            Diagnostic(
                "GF822",
                f"node {node.name} ({node.shown}) publishes {width - len(missing)} of the "
                f"{width} GPUs its pool declares{discovery}: {names} missing",
                where,
                (
                    "a GPU the driver no longer publishes failed or fell off the bus; it is "
                    "taken out of the live capacity until it is repaired or replaced",
                ),
                ((f"pool {pool.name} declares {width} GPUs per node", declared),),
            ),
            node.name,
            tuple(
                lost(pool.name, node.index, i, MISSING, f"{node.name}/{gpu_device_name(i)}", where)
                for i in missing
            ),
        )
    extra = sorted(published - set(expected))
    if extra:
        yield Finding(
            Diagnostic(
                "GF823",
                f"node {node.name} ({node.shown}) publishes GPUs its pool does not declare: "
                f"{', '.join(extra)}",
                where,
                (f"if the node has more GPUs, raise pool {pool.name}'s gpusPerNode",),
                ((f"pool {pool.name} declares {width} GPUs per node", declared),),
            ),
            node.name,
        )


def _extra_node(cluster: ResolvedCluster, found: Node, gpus: tuple[NodeGpu, ...]) -> Finding:
    product = gpus[0].identity.product_name or "GPUs"
    return Finding(
        Diagnostic(
            "GF823",
            f"node {found.name} publishes {len(gpus)} {product} GPU"
            f"{'' if len(gpus) == 1 else 's'} but is in no node pool of cluster {cluster.name}",
            found.span,
            (
                "its GPUs are not in any guarantee's capacity: add the node to a pool (or a "
                "new one; `gpufleet inventory import` writes pools from a dump), or drain it",
            ),
        ),
        found.name,
    )


def _slice_span(dump: ClusterDump, node: Node, driver: str) -> Span:
    """Where the node's devices are listed: its first ResourceSlice, else the Node."""
    slices = dump.slices_of(node.name, driver)
    return slices[0].span if slices else node.span
