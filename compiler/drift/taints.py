"""Device taints the cluster carries that the policy does not declare (GF826): the driver's
health taints (an XID error, a GPU fallen off the bus) or an operator's DeviceTaintRule."""

from __future__ import annotations

from collections.abc import Iterator

from compiler.catalog.driver import gpu_device_name, health_taint
from compiler.diagnostics import Diagnostic, Span
from compiler.drift.findings import Finding, LiveTaint
from compiler.drift.planned import PlannedNode, Published
from compiler.inventory.dump import ClusterDump, Taint
from compiler.ir import ResolvedCluster

MAX_NOTES = 8
"""Nodes a finding notes where the policy declares (a rule on every node names them all in
its message already)."""
BLOCKING = ("NoSchedule", "NoExecute")
"""Effects that keep claims which do not tolerate a taint off its devices."""


def taint_findings(
    cluster: ResolvedCluster,
    dump: ClusterDump,
    planned: list[PlannedNode],
    published: Published,
    driver: str,
) -> Iterator[Finding]:
    """GF826 for each taint written once in the dump (on a device, or by a DeviceTaintRule)
    that puts an undeclared taint on GPUs of declared nodes, naming every GPU it covers."""
    covered: dict[tuple[Taint, Span], list[tuple[PlannedNode, int]]] = {}
    for node in planned:
        found = dump.node(node.name)
        if found is None:
            continue
        indices = {gpu_device_name(i): i for i in range(node.pool.pool.gpus_per_node)}
        for gpu in published[found.name]:
            index = indices.get(gpu.name)
            if index is None:
                continue  # a GPU the pool does not declare: GF823
            for _, taint, span in gpu.taints:
                if not _declared(cluster, node, index, taint):
                    where = covered.setdefault((taint, span), [])
                    if (node, index) not in where:
                        where.append((node, index))
    for (taint, span), gpus in sorted(covered.items(), key=lambda item: item[0][1]):
        yield _finding(taint, span, gpus, driver)


def _declared(cluster: ResolvedCluster, node: PlannedNode, index: int, taint: Taint) -> bool:
    """Whether a DeviceTaint of the policy puts this taint on GPU `index` of the node."""
    for resolved in cluster.taints:
        spec = resolved.taint.spec
        if (spec.key, spec.value, spec.effect) != (taint.key, taint.value, taint.effect):
            continue
        for target in resolved.targets:
            if (
                target.pool.pool.name == node.pool.pool.name
                and node.index in target.node_indices
                and target.device in (None, index)
            ):
                return True
    return False


def _finding(taint: Taint, span: Span, gpus: list[tuple[PlannedNode, int]], driver: str) -> Finding:
    meaning = health_taint(driver, taint.key)
    shown = ", ".join(f"{node.name}/{gpu_device_name(index)}" for node, index in gpus)
    what = f"the driver's health check: {meaning.split(' (')[0]}" if meaning else "not gpufleet's"
    blocks = taint.effect in BLOCKING
    hints = [
        "the policy does not know it: until the GPU is repaired, declare it with a DeviceTaint "
        f"(key {taint.key}, value {taint.value!r}, effect {taint.effect or 'None'}) so that "
        "the guarantees are proven without it",
    ]
    hints.append(
        "its devices are taken out of the live capacity of every team that does not tolerate it"
        if blocks
        else "its effect does not keep claims off the devices: capacity is unchanged"
    )
    return Finding(
        Diagnostic(
            "GF826",
            f"device taint {taint} ({what}) on {shown}, which no DeviceTaint of the policy "
            "declares",
            span,
            tuple(hints),
            tuple(
                (f"the policy declares {node.name} here ({node.shown})", node.span)
                for node in dict.fromkeys(node for node, _ in gpus)
            )[:MAX_NOTES],
        ),
        gpus[0][0].name,
        tuple(
            LiveTaint(
                node.pool.pool.name,
                node.index,
                index,
                taint.key,
                taint.value,
                taint.effect,
                span,
                f"{node.name}/{gpu_device_name(index)}",
            )
            for node, index in gpus
        )
        if blocks
        else (),
    )
