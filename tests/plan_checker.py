"""An independent checker of written plans (out/plan/<cluster>.json) against the policy.

The plan's placement witness names, node by node, the devices that serve each gang. This
checker verifies it with the oracle's own reading of the policy (tests/oracle_policy.py), MIG
tables (tests/oracle_mig.py) and host arithmetic (tests/oracle_host.py), importing nothing from
compiler.solve, compiler.resolve or compiler.catalog: the plan covers every node of every pool;
every GPU runs whole or a MIG layout its model can place, one layout per node where the pool's
`mig` is `allowed`, none where it is `disabled`; every device a gang names exists in its GPU's
layout and serves one gang only; a gang has its guarantee's size and devices of one kind its
tier selects, all within one group of the tier's match attribute (which the cluster's driver
must publish on them), and only devices whose blocking taints (a GPU's taint covers its MIG
devices) its team tolerates; the host shares of a node's devices fit its allocatable memory
and CPU; every guarantee is served in full; and the plan's per-kind assignments and tier
capacities agree with the witness.

`check_plan` returns the problems found (empty when the plan holds); `check_written_plans`
checks every plan a compile wrote against the policies it compiled.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from compiler.diagnostics import CompileError
from compiler.load import load_policies
from compiler.model import build_policies
from tests.oracle_host import Host
from tests.oracle_mig import fits
from tests.oracle_policy import Inventory, NotJudged, Pool, read_cluster

DEVICE = re.compile(r"^gpu-(\d+)(?:/([0-9a-z.+]+)#(\d+))?$")
WHOLE = "whole"


def check_written_plans(policies: Path, out: Path) -> list[str]:
    """The problems of the plans below `out`/plan against the policies in `policies`: one plan
    per cluster, each holding."""
    try:
        read = build_policies(load_policies(policies))
    except CompileError as error:
        return [f"policies {policies} do not load: {error.diagnostics[0].message}"]
    problems = []
    names = {c.name for c in read.clusters}
    written = {p.stem for p in (out / "plan").glob("*.json")}
    problems += [f"no plan for cluster {n}" for n in sorted(names - written)]
    problems += [f"a plan of unknown cluster {n}" for n in sorted(written - names)]
    for name in sorted(names & written):
        text = (out / "plan" / f"{name}.json").read_text(encoding="utf-8")
        try:
            inventory = read_cluster(read, name)
        except NotJudged as error:
            problems.append(f"cluster {name}: not judged by the independent reading: {error}")
            continue
        problems += [f"cluster {name}: {p}" for p in check_plan(inventory, text)]
    return problems


def check_plan(inventory: Inventory, text: str) -> list[str]:
    """The problems of a written plan of the cluster `inventory` reads (empty: it holds)."""
    document = json.loads(text)
    if document.get("cluster") != inventory.cluster:
        return [f"plan of cluster {document.get('cluster')!r}, expected {inventory.cluster!r}"]
    check = _Check(inventory, document)
    for pool in inventory.pools:
        check.pool(pool)
    check.totals()
    return check.problems


def _expand(runs: list[Any]) -> list[Any]:
    return [value for value, count in runs for _ in range(int(count))]


def _layout(text: str) -> dict[str, int] | None:
    """`whole` -> None; `2x3g.40gb,1x1g.10gb` -> {3g.40gb: 2, 1g.10gb: 1}."""
    if text == WHOLE:
        return None
    counts: Counter[str] = Counter()
    for part in text.split(","):
        number, profile = part.split("x", 1)
        counts[profile] += int(number)
    return dict(counts)


def _kind(pool: str, profile: str) -> str:
    """A device kind as the plan names it: `h100/gpu`, `h100/mig-3g.40gb`."""
    return f"{pool}/{'mig-' + profile if profile else 'gpu'}"


class _Check:
    def __init__(self, inventory: Inventory, document: dict[str, Any]) -> None:
        self.inventory, self.document = inventory, document
        self.needs = {n.key: n for n in inventory.needs}
        self.problems: list[str] = []
        self.served: Counter[str] = Counter()
        self.per_kind: Counter[tuple[str, str]] = Counter()
        self.offered: Counter[tuple[str, str]] = Counter()

    def pool(self, pool: Pool) -> None:
        labels = _expand(self.document.get("nodeConfigs", {}).get(pool.name, []))
        placed = _expand(self.document.get("placements", {}).get(pool.name, []))
        if len(labels) != pool.nodes or len(placed) != pool.nodes:
            self.problems.append(
                f"pool {pool.name}: {len(labels)} labelled and {len(placed)} placed nodes, "
                f"not {pool.nodes}"
            )
            return
        configs = self.document.get("migConfigs", {})
        for node, (label, gangs) in enumerate(zip(labels, placed, strict=True)):
            where = f"pool {pool.name} node {node}"
            written = configs.get(label)
            if not isinstance(written, list) or len(written) not in (1, pool.width):
                self.problems.append(f"{where}: no layout of every GPU for config {label!r}")
                continue
            per_gpu = written * pool.width if len(written) == 1 else written
            if pool.mig == "allowed" and len(set(per_gpu)) > 1:
                self.problems.append(f"{where}: GPUs of a `mig: allowed` pool differ {per_gpu}")
            layouts = [_layout(text) for text in per_gpu]
            for gpu, layout in enumerate(layouts):
                if layout is None:
                    self.offered[pool.name, ""] += 1
                    continue
                if pool.mig == "disabled" or not fits(pool.gpu, layout):
                    self.problems.append(f"{where}: GPU {gpu} cannot run MIG layout {per_gpu[gpu]}")
                for profile, count in layout.items():
                    self.offered[pool.name, profile] += count
            self.node(pool, node, layouts, gangs)

    def node(
        self, pool: Pool, node: int, layouts: list[dict[str, int] | None], gangs: dict[str, str]
    ) -> None:
        where = f"pool {pool.name} node {node}"
        used: set[str] = set()
        host = Host(0, 0)
        for key, text in gangs.items():
            need = self.needs.get(key)
            if need is None:
                self.problems.append(f"{where}: gangs of unknown guarantee {key}")
                continue
            tier = self.inventory.tiers[need.tier]
            tolerated = self.inventory.tolerated(need.team)
            for gang in text.split():
                devices = gang.split(",")
                parsed = [DEVICE.match(d) for d in devices]
                if len(devices) != need.gang or None in parsed:
                    self.problems.append(f"{where}: {key} gang {gang} is not {need.gang} devices")
                    continue
                profiles = {m[2] or "" for m in parsed if m}
                if len(profiles) != 1:
                    self.problems.append(f"{where}: {key} gang {gang} mixes device kinds")
                    continue
                (profile,) = profiles
                if (pool.name, profile) not in tier.kinds:
                    self.problems.append(
                        f"{where}: {key} gang {gang} uses {_kind(pool.name, profile)}, "
                        f"not of tier {tier.name}"
                    )
                gpus = []
                for device, match in zip(devices, parsed, strict=True):
                    assert match is not None
                    gpu = int(match[1])
                    gpus.append(gpu)
                    if device in used:
                        self.problems.append(f"{where}: device {device} serves two gangs")
                    used.add(device)
                    if gpu >= pool.width:
                        self.problems.append(f"{where}: no GPU {gpu}")
                        continue
                    layout = layouts[gpu]
                    if profile and (layout is None or int(match[3]) >= layout.get(profile, 0)):
                        self.problems.append(f"{where}: GPU {gpu} holds no {device}")
                    elif not profile and layout is not None:
                        self.problems.append(
                            f"{where}: GPU {gpu} is partitioned, {device} is not whole"
                        )
                    if not self.inventory.taints_on(pool.name, node, gpu) <= tolerated:
                        self.problems.append(
                            f"{where}: {key} does not tolerate the taints of {device}"
                        )
                self._group(where, key, need, pool, profile, gang, gpus)
                host = host + tier.share * len(devices)
                self.served[key] += len(devices)
                self.per_kind[key, _kind(pool.name, profile)] += len(devices)
        if not host.fits_in(pool.room):
            self.problems.append(
                f"{where}: host shares {host.memory} B, {host.cpu} m exceed "
                f"{pool.room.memory} B, {pool.room.cpu} m"
            )

    def _group(
        self, where: str, key: str, need: Any, pool: Pool, profile: str, gang: str, gpus: list[int]
    ) -> None:
        size = self.inventory.group(need, pool, profile)
        attribute = self.inventory.tiers[need.tier].attribute
        if size is None:
            self.problems.append(
                f"{where}: {key} gang {gang}: its devices share no known value of {attribute}"
            )
        elif size == 0 and len(gpus) > 1:
            self.problems.append(f"{where}: {key} gang {gang} spans devices of one-device groups")
        elif size and len({gpu // size for gpu in gpus}) > 1:
            self.problems.append(f"{where}: {key} gang {gang} spans {attribute} groups of {size}")

    def totals(self) -> None:
        for key, need in self.needs.items():
            if self.served[key] != need.count:
                self.problems.append(
                    f"guarantee {key}: {self.served[key]} devices served, not {need.count}"
                )
            written = self.document.get("assignments", {}).get(key, {})
            witnessed = {kind: n for (k, kind), n in self.per_kind.items() if k == key}
            if written != witnessed:
                self.problems.append(
                    f"guarantee {key}: assignments {written} but placements {witnessed}"
                )
        for key in self.document.get("assignments", {}):
            if key not in self.needs:
                self.problems.append(f"assignments of unknown guarantee {key}")
        written_tiers = self.document.get("tiers", {})
        for tier in self.inventory.tiers.values():
            if not tier.kinds:
                continue
            capacity = sum(self.offered[kind] for kind in tier.kinds)
            if written_tiers.get(tier.name, {}).get("capacity") != capacity:
                self.problems.append(
                    f"tier {tier.name}: capacity "
                    f"{written_tiers.get(tier.name, {}).get('capacity')}, devices {capacity}"
                )
