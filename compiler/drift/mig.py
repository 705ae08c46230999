"""MIG layouts: a node whose `nvidia.com/mig.config` label is not the one the plan gives it
(GF824), or whose label is but whose published MIG devices are not that layout: the MIG
manager has not applied it (GF825)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator

from compiler.catalog.driver import gpu_device_name
from compiler.catalog.node_labels import MIG_CONFIG, MIG_CONFIG_STATE, MIG_DISABLED
from compiler.diagnostics import Diagnostic, Span
from compiler.drift.findings import MIG_LAYOUT, Finding, lost
from compiler.drift.planned import PlannedNode, Published
from compiler.inventory.dump import ClusterDump, Node
from compiler.inventory.gpus import NodeGpu
from compiler.ir import WHOLE, WHOLE_GPU, ClusterPlan, layout_devices

PlanSpan = Callable[[str], Span]
"""Where the committed plan lists the MIG configurations of the nodes of pool `name`."""


def mig_findings(
    dump: ClusterDump,
    planned: list[PlannedNode],
    plan: ClusterPlan,
    plan_span: PlanSpan,
    published: Published,
    driver: str,
) -> Iterator[Finding]:
    """GF824 or GF825 for every declared node the dump has whose MIG layout is not planned."""
    for node in planned:
        found = dump.node(node.name)
        if found is None:
            continue
        label = plan.label_of(node.pool.pool.name, node.index, node.name)
        live = found.labels.get(MIG_CONFIG)
        if node.pool.pool.mig != "disabled" and (live or MIG_DISABLED) != label:
            yield _relabelled(node, found, label, live, plan_span)
            continue
        gpus = {gpu.name: gpu for gpu in published[found.name]}
        layouts = plan.mig_configs[label].gpus if label in plan.mig_configs else (WHOLE,)
        width = node.pool.pool.gpus_per_node
        per_gpu = layouts * width if len(layouts) == 1 else layouts
        wrong = {
            name: _shown(gpu)
            for index, layout in enumerate(per_gpu)
            if (gpu := gpus.get(name := gpu_device_name(index))) is not None
            and not gpu.partitionable  # Dynamic MIG: partitioned per claim, no fixed layout
            and Counter(gpu.mig_profiles or (WHOLE_GPU,)) != Counter(layout_devices(layout))
        }
        if wrong:
            yield _not_applied(node, found, label, wrong, dump, driver, plan_span)


def _shown(gpu: NodeGpu) -> str:
    """A GPU's live layout as mig-parted writes one: `whole`, `2x3g.40gb`."""
    if not gpu.mig_profiles:
        return WHOLE
    counts = Counter(gpu.mig_profiles)
    return ",".join(f"{n}x{profile}" for profile, n in sorted(counts.items()))


def _relabelled(
    node: PlannedNode, found: Node, label: str, live: str | None, plan_span: PlanSpan
) -> Finding:
    shown = f"`{MIG_CONFIG}={live}`" if live else f"no `{MIG_CONFIG}` label"
    return Finding(
        Diagnostic(
            "GF824",
            f"node {node.name} ({node.shown}) has {shown}; the plan gives it {label}",
            found.span,
            (
                f"label it as planned (drain it first): kubectl label node {node.name} "
                f"{MIG_CONFIG}={label} --overwrite",
                "or, if the node should keep its layout, change the policy and compile: the "
                "plan is what the guarantees were proven on",
                "until then the node is out of the live capacity: its devices are not the ones "
                "the plan counts on",
            ),
            (
                (f"the plan gives {node.name} {label}", plan_span(node.pool.pool.name)),
                ("the policy declares the node here", node.span),
            ),
        ),
        node.name,
        (lost(node.pool.pool.name, node.index, None, MIG_LAYOUT, node.name, found.span),),
    )


def _not_applied(
    node: PlannedNode,
    found: Node,
    label: str,
    wrong: dict[str, str],
    dump: ClusterDump,
    driver: str,
    plan_span: PlanSpan,
) -> Finding:
    by_layout: dict[str, list[str]] = {}
    for name, layout in wrong.items():
        by_layout.setdefault(layout, []).append(name)
    published = "; ".join(f"{', '.join(names)} {layout}" for layout, names in by_layout.items())
    state = found.labels.get(MIG_CONFIG_STATE)
    slices = dump.slices_of(found.name, driver)
    return Finding(
        Diagnostic(
            "GF825",
            f"node {node.name} ({node.shown}) is labelled {label} as planned, but its MIG "
            f"devices are not that layout: it publishes {published}"
            + (f" ({MIG_CONFIG_STATE}={state})" if state else ""),
            slices[0].span if slices else found.span,
            (
                "the GPU operator's MIG manager has not applied the label: see its logs on "
                "the node (drain the node and relabel it to retry)",
                "until then the node is out of the live capacity",
            ),
            (
                (f"the plan gives {node.name} {label}", plan_span(node.pool.pool.name)),
                (f"{node.name} is labelled here", found.span),
                ("the policy declares the node here", node.span),
            ),
        ),
        node.name,
        (lost(node.pool.pool.name, node.index, None, MIG_LAYOUT, node.name, found.span),),
    )
