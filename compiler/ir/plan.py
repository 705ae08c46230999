"""The solved plan of one cluster, written to out/plan/<cluster>.json and read back next time."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar

import orjson

from compiler.ir.devices import ALL_DISABLED, WHOLE
from compiler.ir.keys import WHOLE_GPU, DeviceKey, GuaranteeKey

T = TypeVar("T")
Runs = list[tuple[str, int]]
NodeGangs = tuple[tuple[GuaranteeKey, tuple[str, ...]], ...]
"""The gangs one node serves: (guarantee key, the devices of one gang) each."""
GangRuns = list[tuple[NodeGangs, int]]


def percent(part: int, whole: int) -> str:
    """`part` as a whole percentage of `whole`, rounded half up; `-` when `whole` is 0. The one
    rounding rule of every percentage gpufleet prints (explain and the report agree)."""
    if whole <= 0:
        return "-"
    return f"{(200 * part + whole) // (2 * whole)}%"


@dataclass(frozen=True)
class TierCapacity:
    """Devices a tier's selector reaches in the plan (raw capacity), how many are promised, how
    many carry a blocking taint (usable only by teams that tolerate it), how many of those no
    holder of the tier tolerates (idle), and how many untainted devices the guarantees need
    (solve.usable)."""

    tier: str
    capacity: int
    guaranteed: int
    limit: int
    tainted: int = 0
    idle: int = 0
    untainted_promised: int = 0

    @property
    def headroom(self) -> int:
        """Usable devices of the tier not promised to anyone."""
        return self.usable - self.guaranteed

    @property
    def headroom_share(self) -> str:
        """The headroom as a percentage of the usable devices it is part of (`percent`)."""
        return percent(self.headroom, self.usable)

    @property
    def usable(self) -> int:
        """Devices some holder of the tier can be given."""
        return self.capacity - self.idle

    @property
    def untainted(self) -> int:
        """Devices without a blocking taint: anyone may be lent them."""
        return self.capacity - self.tainted

    @property
    def borrowable(self) -> int:
        """Untainted devices no guarantee of the tier needs: what it can lend to anyone."""
        return max(0, self.untainted - self.untainted_promised)


@dataclass(frozen=True)
class MigConfig:
    """A node configuration as mig-parted applies it: the layout of each GPU index."""

    label: str
    gpus: tuple[str, ...]
    """Per GPU index: `whole` or a layout such as `2x3g.40gb`; one entry means every GPU."""


@dataclass(frozen=True)
class ClusterPlan:
    """A feasible assignment for one cluster.

    `node_configs` maps pool -> the mig.config label of every node in index order (run-length
    encoded); `assignments` maps guarantee key -> device kind key -> devices. `placements` maps
    pool -> the gangs of every node in index order (run-length encoded): one way to serve every
    guarantee at once, device by device (`gpu-3`, or `gpu-3/3g.40gb#1` for the second
    3g.40gb instance of GPU 3), a certificate that a checker can verify without the solver.
    Workloads are not pinned to these devices.
    """

    cluster: str
    node_configs: dict[str, Runs]
    mig_configs: dict[str, MigConfig]
    assignments: dict[GuaranteeKey, dict[DeviceKey, int]]
    tiers: tuple[TierCapacity, ...]
    namespaces: tuple[str, ...] = ()
    """The team namespaces gpufleet manages in the cluster, so that the next report can say
    which leave management."""
    changed_nodes: tuple[str, ...] = ()
    """Nodes whose MIG configuration differs from the previous plan (to be drained). A property
    of this compile, not of the plan: it is not written to the plan file, so that compiling again
    from the written plan gives the same bytes."""
    placements: dict[str, GangRuns] = field(default_factory=dict)
    limits: dict[GuaranteeKey, int] = field(default_factory=dict)
    """The limit (quota) of every guarantee key, a zero guarantee's too, so that the next
    report can say which quotas shrink."""
    node_names: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """The node names of each pool that lists them (`nodeNames: [...]`), in index order, so
    that the next compile finds a node's configuration by its name: a node removed from the
    middle of a list must not pass its configuration on to the nodes after it."""

    def devices(self, pool: str, gpus_per_node: int) -> dict[str, int]:
        """Devices the pool's nodes offer in this plan: `gpu` or a MIG profile -> count."""
        found: dict[str, int] = {}
        for label, nodes in self.node_configs.get(pool, []):
            layouts = self.mig_configs[label].gpus
            per_gpu = layouts * gpus_per_node if len(layouts) == 1 else layouts
            for layout in per_gpu:
                for device, count in layout_devices(layout).items():
                    found[device] = found.get(device, 0) + count * nodes
        return dict(sorted(found.items()))

    def labels(self, pool: str) -> list[str]:
        """The mig.config label of every node of `pool`, in index order."""
        return self.steering.labels(pool)

    def label_of(self, pool: str, index: int, name: str | None) -> str:
        """The label this plan gave the node that is now node `index` of `pool`, named `name`
        (Steering.label_of)."""
        return self.steering.label_of(pool, index, name)

    @cached_property
    def steering(self) -> Steering:
        """What of this plan steers the next compile's solve."""
        configs, names = sorted(self.node_configs.items()), sorted(self.node_names.items())
        return Steering(self.cluster, dict(configs), dict(names))

    def to_json(self) -> str:
        """The plan as stable, sorted, indented JSON."""
        document: dict[str, Any] = {
            "cluster": self.cluster,
            "nodeConfigs": {
                p: [[label, n] for label, n in runs] for p, runs in self.node_configs.items()
            },
            "migConfigs": {label: list(c.gpus) for label, c in self.mig_configs.items()},
            "assignments": {
                str(k): {str(d): n for d, n in v.items()} for k, v in self.assignments.items()
            },
            "namespaces": list(self.namespaces),
            "limits": {str(k): n for k, n in sorted(self.limits.items())},
            "nodeNames": {pool: list(names) for pool, names in sorted(self.node_names.items())},
            "placements": {
                pool: [[_gangs_json(gangs), n] for gangs, n in runs]
                for pool, runs in self.placements.items()
            },
            "tiers": {
                t.tier: {
                    "capacity": t.capacity,
                    "guaranteed": t.guaranteed,
                    "limit": t.limit,
                    "headroom": t.headroom,
                    "tainted": t.tainted,
                    "usable": t.usable,
                    "untaintedPromised": t.untainted_promised,
                }
                for t in self.tiers
            },
        }
        return indented_json(document) + "\n"

    @staticmethod
    def from_json(text: str) -> ClusterPlan:
        """Read a plan written by to_json (ValueError when it is not one). Fields this version
        does not know are ignored, so a plan written by a newer gpufleet still reads."""
        return _from_plan_json(text, ClusterPlan._from_document)

    @staticmethod
    def _from_document(document: dict[str, Any]) -> ClusterPlan:
        steering = Steering._from_document(document)
        return ClusterPlan(
            cluster=steering.cluster,
            node_configs=steering.node_configs,
            mig_configs={
                str(label): MigConfig(str(label), tuple(str(g) for g in gpus))
                for label, gpus in document.get("migConfigs", {}).items()
            },
            assignments={
                GuaranteeKey.parse(str(k)): {DeviceKey.parse(str(d)): int(n) for d, n in v.items()}
                for k, v in document.get("assignments", {}).items()
            },
            tiers=tuple(
                TierCapacity(
                    str(t),
                    int(v["capacity"]),
                    int(v["guaranteed"]),
                    int(v["limit"]),
                    int(v.get("tainted", 0)),
                    int(v["capacity"]) - int(v.get("usable", v["capacity"])),
                    int(v.get("untaintedPromised", v["guaranteed"])),
                )
                for t, v in sorted(document.get("tiers", {}).items())
            ),
            namespaces=tuple(str(n) for n in document.get("namespaces", [])),
            placements={
                str(pool): [(_gangs_from_json(gangs), int(n)) for gangs, n in runs]
                for pool, runs in document.get("placements", {}).items()
            },
            limits={
                GuaranteeKey.parse(str(k)): int(v)
                for k, v in sorted(document.get("limits", {}).items())
            },
            node_names=steering.node_names,
        )


@dataclass(frozen=True)
class Steering:
    """What of a cluster's plan steers the next compile's solve: the mig.config label of every
    node (`node_configs`, as in ClusterPlan) and, for the pools that list their node names, the
    names the labels are found by (`node_names`). The solver reads nothing else of a previous
    plan, the compile cache keys a cluster's result on it, and `compile` reads only this of
    out/plan/ (the rest of a plan is for reports). Pools are in name order, however the plan
    had them, so that the steering of a plan and of the plan read back are one key."""

    cluster: str
    node_configs: dict[str, Runs]
    node_names: dict[str, tuple[str, ...]]

    @staticmethod
    def from_json(text: str) -> Steering:
        """Read what steers of a plan written by ClusterPlan.to_json (ValueError when it is no
        plan)."""
        return _from_plan_json(text, Steering._from_document)

    @staticmethod
    def _from_document(document: dict[str, Any]) -> Steering:
        return Steering(
            cluster=str(document["cluster"]),
            node_configs={
                str(p): [(str(label), int(n)) for label, n in runs]
                for p, runs in sorted(document["nodeConfigs"].items())
            },
            node_names={
                str(pool): tuple(str(n) for n in names)
                for pool, names in sorted(document.get("nodeNames", {}).items())
            },
        )

    def labels(self, pool: str) -> list[str]:
        """The mig.config label of every node of `pool`, in index order."""
        return list(self._labels.get(pool, ()))

    def label_of(self, pool: str, index: int, name: str | None) -> str:
        """The label the plan gave the node that is now node `index` of `pool`, named `name`:
        found by name where the plan lists the pool's names (by index where it does not, or
        where the name is not known now); `all-disabled` for a node the plan did not have."""
        labels = self._labels.get(pool, ())
        positions = self._positions.get(pool)
        if positions is not None and name is not None:
            position = positions.get(name)
            return labels[position] if position is not None else ALL_DISABLED
        return labels[index] if index < len(labels) else ALL_DISABLED

    @cached_property
    def _labels(self) -> dict[str, tuple[str, ...]]:
        return {
            pool: tuple(label for label, count in runs for _ in range(count))
            for pool, runs in self.node_configs.items()
        }

    @cached_property
    def _positions(self) -> dict[str, dict[str, int]]:
        return {
            pool: {n: i for i, n in enumerate(names)} for pool, names in self.node_names.items()
        }


def _from_plan_json(text: str, read: Callable[[dict[str, Any]], T]) -> T:
    """`read` applied to the plan document in `text`; ValueError when it is not one."""
    document = json.loads(text)
    if not isinstance(document, dict) or not isinstance(document.get("cluster"), str):
        raise ValueError("not a gpufleet plan (no cluster name)")
    try:
        return read(document)
    except (KeyError, TypeError, AttributeError, ValueError) as error:
        raise ValueError(f"not a gpufleet plan ({type(error).__name__}: {error})") from None


def indented_json(document: dict[str, Any]) -> str:
    """`json.dumps(document, indent=2, sort_keys=True)`, byte for byte, by orjson's encoder:
    the standard library indents in pure Python, 2 ms a plan of fleet L, 40 times orjson's
    time. A document that orjson would write otherwise is left to json: a string beyond
    ASCII (json escapes it, orjson does not) or an integer beyond 64 bits (orjson refuses it).
    """
    try:
        text: bytes | None = orjson.dumps(
            document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
        )
    except orjson.JSONEncodeError:
        text = None
    if text is not None and text.isascii():
        return text.decode("ascii")
    return json.dumps(document, indent=2, sort_keys=True)


def _gangs_json(gangs: NodeGangs) -> dict[str, str]:
    """A node's gangs as {guarantee key: "gang gang ..."}, a gang being its devices joined by
    commas: `gpu-0,gpu-1` or `gpu-2/3g.40gb#0`."""
    found: dict[GuaranteeKey, list[str]] = {}
    for key, devices in gangs:
        found.setdefault(key, []).append(",".join(devices))
    return {str(key): " ".join(parts) for key, parts in sorted(found.items())}


def _gangs_from_json(gangs: dict[str, str]) -> NodeGangs:
    return tuple(
        sorted(
            (GuaranteeKey.parse(str(key)), tuple(gang.split(",")))
            for key, text in gangs.items()
            for gang in str(text).split()
        )
    )


def layout_devices(layout: str) -> dict[str, int]:
    """`whole` -> {gpu: 1}; `2x3g.40gb,1x1g.10gb` -> {3g.40gb: 2, 1g.10gb: 1}."""
    if layout == WHOLE:
        return {WHOLE_GPU: 1}
    counts: dict[str, int] = {}
    for part in layout.split(","):
        count, profile = part.split("x", 1)
        counts[profile] = int(count)
    return dict(sorted(counts.items()))


def run_length(values: list[T]) -> list[tuple[T, int]]:
    """[a, a, b] -> [(a, 2), (b, 1)]: how a plan lists per-node values (labels, gangs)."""
    runs: list[tuple[T, int]] = []
    for value in values:
        if runs and runs[-1][0] == value:
            runs[-1] = (value, runs[-1][1] + 1)
        else:
            runs.append((value, 1))
    return runs


def previous_label(
    previous: Steering | None, pool: str, index: int, name: str | None = None
) -> str:
    """The label node `index` of `pool` (named `name`, where known) had in the previous plan,
    `all-disabled` when unknown (Steering.label_of)."""
    return ALL_DISABLED if previous is None else previous.label_of(pool, index, name)
