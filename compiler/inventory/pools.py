"""Group a dump's GPU nodes into node pools: nodes with the same GPU model, GPUs per node,
MIG mode, CPU and memory are one pool.

- **GPUs per node** is what the node has, not what its driver publishes right now: the
  larger of the GPUs published and GPU feature discovery's `nvidia.com/gpu.count`. A node that
  lost a GPU (fell off the bus, failed) joins its peers' pool with their shape, and GF811 says
  which GPUs are missing; `gpufleet drift` then reports the capacity it lacks. A node whose
  driver publishes no GPU but whose labels say it has some is taken by its labels the same way.
- **MIG mode**: `disabled` when nothing shows MIG on the node; `allowed` when the MIG manager
  manages it (`nvidia.com/mig.config` set, `all-disabled` included) or it publishes MIG
  devices; `mixed` when its GPUs run different layouts or are partitionable (Dynamic MIG), and
  any node of a pool decides for the pool. Models without MIG are always `disabled`.
- **Topology**: GPUs per PCIe root and per NUMA node, where the driver publishes
  `resource.kubernetes.io/pcieRoot` / `numaNode` on every GPU and the groups are even
  (consecutive GPUs, the same number each), as a pool's `topology` counts them.
- **Host**: `status.capacity` cpu and memory (what the policy's `cpu` and `hostMemory` mean,
  before the kubelet's reservations), memory rounded down to whole GiB so that identical
  machines whose kernels report a few MiB apart stay one pool.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Literal

from compiler.catalog import Catalog, GpuModel
from compiler.catalog.driver import gpu_device_name
from compiler.catalog.node_labels import GPU_COUNT, GPU_MEMORY, GPU_PRODUCT, MIG_CONFIG
from compiler.diagnostics import Diagnostic, Span
from compiler.inventory.dump import ClusterDump, Node, Taint
from compiler.inventory.gpus import NodeGpu, node_gpus
from compiler.inventory.matching import match_model, model_by_label, model_document

MigMode = Literal["disabled", "allowed", "mixed"]
GIB = 2**30


@dataclass(frozen=True, order=True)
class PoolShape:
    """What every node of a pool has in common."""

    model: str
    """The catalog model's id."""
    gpus_per_node: int
    managed_mig: bool
    """Whether anything shows MIG on the nodes (the MIG manager's label, MIG devices)."""
    cpu: Fraction
    host_memory: Fraction
    """Bytes, whole GiB."""


@dataclass(frozen=True)
class ImportedPool:
    """A pool of the dump: its shape, its MIG mode, its nodes' names (sorted) and its GPUs
    per NUMA node and per PCIe root where the dump shows them (None: it does not, or its
    nodes disagree)."""

    shape: PoolShape
    mig: MigMode
    nodes: tuple[str, ...]
    numa_node: int | None = None
    pcie_root: int | None = None


@dataclass(frozen=True)
class _NodeFacts:
    name: str
    shape: PoolShape
    degraded: bool
    """Whether the node publishes fewer GPUs than it has (its MIG state may not show)."""
    mixed: bool
    numa_node: int | None
    pcie_root: int | None


def group_pools(
    dump: ClusterDump, catalog: Catalog, driver: str
) -> tuple[list[ImportedPool], list[Diagnostic]]:
    """The dump's GPU nodes as pools, in the order of their shapes, and the findings about
    them (GF810 unknown GPU, GF811 missing GPUs, GF812 tainted devices, GF813 mixed node)."""
    problems: list[Diagnostic] = []
    members: dict[PoolShape, list[_NodeFacts]] = defaultdict(list)
    for node in dump.nodes:
        gpus = node_gpus(dump, node, driver)
        facts = _facts(node, gpus, catalog, problems)
        if facts is not None:
            members[facts.shape].append(facts)
        problems.extend(_taint_findings(node, gpus))
    _join_peers(members)
    pools = [
        ImportedPool(
            shape=shape,
            mig=_mig_mode(shape, [f.mixed for f in found]),
            nodes=tuple(sorted((f.name for f in found), key=natural_key)),
            numa_node=_agreed([f.numa_node for f in found]),
            pcie_root=_agreed([f.pcie_root for f in found]),
        )
        for shape, found in sorted(members.items())
    ]
    return pools, problems


def _join_peers(members: dict[PoolShape, list[_NodeFacts]]) -> None:
    """Move degraded nodes that show no MIG into the pool of their peers that do: a node
    whose GPUs are gone shows neither MIG devices nor, always, the MIG manager's label."""
    for shape in [s for s in members if not s.managed_mig]:
        peer = replace(shape, managed_mig=True)
        if peer not in members or not all(f.degraded for f in members[shape]):
            continue
        members[peer].extend(members.pop(shape))


def _agreed(values: list[int | None]) -> int | None:
    """The one value the nodes that show one agree on (a node that lost a GPU shows none)."""
    shown = {v for v in values if v is not None}
    return shown.pop() if len(shown) == 1 else None


def natural_key(name: str) -> tuple[tuple[int, str], ...]:
    """Sort key putting `node-2` before `node-10`."""
    parts: list[tuple[int, str]] = []
    number = ""
    text = ""
    for character in name:
        if character.isdigit():
            if text:
                parts.append((1, text))
                text = ""
            number += character
        else:
            if number:
                parts.append((0, number.zfill(20)))
                number = ""
            text += character
    parts += [(1, text)] if text else []
    parts += [(0, number.zfill(20))] if number else []
    return tuple(parts)


def _mig_mode(shape: PoolShape, mixed: list[bool]) -> MigMode:
    if not shape.managed_mig:
        return "disabled"
    return "mixed" if any(mixed) else "allowed"


def _facts(
    node: Node, gpus: tuple[NodeGpu, ...], catalog: Catalog, problems: list[Diagnostic]
) -> _NodeFacts | None:
    """The node's shape, or None when it has no GPU (or one that stops the import)."""
    labelled = _count_label(node)
    if not gpus and not labelled:
        return None  # a node without GPUs: control plane, CPU workers
    model = _model(node, gpus, catalog, problems)
    if model is None:
        return None
    absent = [name for name in ("cpu", "memory") if name not in node.capacity]
    if absent:
        problems.append(
            Diagnostic(
                "GF802",
                f"Node {node.name}: status.capacity has no {' and no '.join(absent)}, which a "
                "pool's cpu and hostMemory are",
                node.span,
                ("dump the objects with `kubectl get ... -o yaml`, unedited",),
            )
        )
        return None
    expected = max(len(gpus), labelled)
    if len(gpus) < expected:
        problems.append(_missing(node, gpus, expected))
    layouts = {g.mig_profiles for g in gpus}
    partitionable = any(g.partitionable for g in gpus)
    managed = model.mig is not None and (
        MIG_CONFIG in node.labels or partitionable or any(g.mig_profiles for g in gpus)
    )
    return _NodeFacts(
        name=node.name,
        degraded=len(gpus) < expected,
        shape=PoolShape(
            model=model.id,
            gpus_per_node=expected,
            managed_mig=managed,
            cpu=node.capacity.get("cpu", Fraction(0)),
            host_memory=Fraction(node.capacity.get("memory", Fraction(0)) // GIB * GIB),
        ),
        mixed=managed and (partitionable or len(layouts) > 1),
        numa_node=_group_size([g.numa_node for g in gpus], expected),
        pcie_root=_group_size([g.pcie_root for g in gpus], expected),
    )


def _group_size(values: list[object], expected: int) -> int | None:
    """GPUs per value of a topology attribute, when every GPU shows it and each value holds
    the same number of consecutive GPUs (as the policy's `topology` counts), else None."""
    if not values or any(v is None for v in values) or len(values) != expected:
        return None
    runs: list[int] = []
    seen: set[object] = set()
    previous: object = None
    for value in values:
        if value == previous:
            runs[-1] += 1
            continue
        if value in seen:
            return None  # not consecutive
        seen.add(value)
        runs.append(1)
        previous = value
    return runs[0] if len(set(runs)) == 1 else None


def _count_label(node: Node) -> int:
    text = node.labels.get(GPU_COUNT, "")
    return int(text) if text.isdigit() and len(text) < 4 else 0


def _model(
    node: Node, gpus: tuple[NodeGpu, ...], catalog: Catalog, problems: list[Diagnostic]
) -> GpuModel | None:
    """The one catalog model of the node's GPUs (GF810 unknown, GF813 several)."""
    if not gpus:
        model = model_by_label(catalog, node.labels.get(GPU_PRODUCT, ""))
        if model is None:
            problems.append(
                Diagnostic(
                    "GF810",
                    f"node {node.name} publishes no GPU, and its label {GPU_PRODUCT}="
                    f"{node.labels.get(GPU_PRODUCT, '')!r} names no catalog model",
                    node.span,
                    ("import it again once its driver publishes its GPUs",),
                )
            )
        return model
    models: dict[str, GpuModel] = {}
    for gpu in gpus:
        identity = gpu.identity
        if identity.memory_mib is None and node.labels.get(GPU_MEMORY, "").isdigit():
            # a GPU in MIG mode publishes only its instances' memory: the node's label says it
            identity = replace(identity, memory_mib=int(node.labels[GPU_MEMORY]))
        model = match_model(catalog, identity)
        if model is None:
            problems.append(_unknown(node, gpu))
            return None
        models.setdefault(model.id, model)
    if len(models) > 1:
        problems.append(
            Diagnostic(
                "GF813",
                f"node {node.name} holds GPUs of {len(models)} models ({', '.join(sorted(models))})"
                ": a node pool has one",
                node.span,
                ("leave the node out of the dump, or describe it in the policy by hand",),
            )
        )
        return None
    return next(iter(models.values()))


def _unknown(node: Node, gpu: NodeGpu) -> Diagnostic:
    identity = gpu.identity
    return Diagnostic(
        "GF810",
        f"{gpu.name} of node {node.name} ({identity.product_name or 'no productName'}, "
        f"{identity.architecture or 'no architecture'}, compute capability "
        f"{identity.compute_capability or 'unknown'}, "
        + (f"{identity.memory_mib} MiB" if identity.memory_mib is not None else "memory unknown")
        + ") is no model of the catalog",
        node.span,
        (
            "describe it in the fleet with this document: "
            + model_document(identity, node.labels.get(GPU_MEMORY)),
            "then add its pciDeviceId (the first four hex digits of `nvidia-smi --query-gpu="
            "pci.device_id --format=csv,noheader`: 0x233010DE -> 0x2330) and, for MIG, its "
            "`mig` geometry (`nvidia-smi mig -lgip`), and import again",
        ),
    )


def _missing(node: Node, gpus: tuple[NodeGpu, ...], expected: int) -> Diagnostic:
    present = {g.name for g in gpus}
    absent = [n for i in range(expected) if (n := gpu_device_name(i)) not in present]
    named = f" ({', '.join(absent)})" if absent and len(absent) == expected - len(gpus) else ""
    return Diagnostic(
        "GF811",
        f"node {node.name} publishes {len(gpus)} of its {expected} GPUs{named}: imported with "
        f"{expected}, as its label {GPU_COUNT} says",
        node.span,
        (
            "the node keeps its place in the pool; `gpufleet drift` reports the capacity it "
            "lacks until the GPU is repaired or the node is drained and removed",
        ),
    )


def _taint_findings(node: Node, gpus: tuple[NodeGpu, ...]) -> Iterator[Diagnostic]:
    """GF812 per taint of the node's devices, naming the devices it is on."""
    devices: dict[tuple[Taint, Span], list[str]] = defaultdict(list)
    for gpu in gpus:
        for device, taint, span in gpu.taints:
            devices[taint, span].append(device)
    for (taint, span), names in devices.items():
        shown = (
            f"device {names[0]} of node {node.name} is"
            if len(names) == 1
            else f"devices {', '.join(names)} of node {node.name} are"
        )
        yield Diagnostic(
            "GF812",
            f"{shown} tainted {taint}: imported as capacity",
            span,
            (
                "a device taint is the cluster's state, not the policy's: `gpufleet drift` "
                "reports it against the plan; a lasting one belongs in a DeviceTaint",
            ),
        )
