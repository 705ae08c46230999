"""The cluster as it is now, for the solver: the policy's resolved cluster with what drift
found added as device taints, built beside it (the policy's objects are never changed).

Capacity the cluster lacks (a missing node or GPU, a node not Ready, a node whose MIG layout is
not the plan's) becomes a NoSchedule taint nobody tolerates on those devices, in the domain
DRIFT_DOMAIN; a blocking taint the cluster carries and the policy does not declare becomes the
same taint, tolerated by the teams whose tolerations match it. Node indices, pools and tiers
stay as they are, so the solver's node groups, the plan's MIG layouts and every explanation
read the live cluster exactly as they read the policy's: a taint on a node is one more node
group, and a taint in a minimal conflict is named with where the dump shows it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Literal, cast

from compiler.drift.findings import LiveTaint
from compiler.ir import ResolvedCluster, ResolvedPool, ResolvedTaint, TaintTarget, tolerates
from compiler.ir.policy import DeviceTaint
from compiler.load.document import SourceDocument, pack_position
from compiler.model.base import API_VERSION, Metadata
from compiler.model.taint import DeviceTaintSpec


def live_cluster(cluster: ResolvedCluster, taints: Iterable[LiveTaint]) -> ResolvedCluster:
    """`cluster` with `taints` in force besides its own. A taint the cluster carries is one
    ResolvedTaint per place it is written (the devices a DeviceTaintRule covers are one taint,
    as in the cluster); capacity the cluster lacks is one per pool and kind (whole nodes, or
    GPUs), so that a rack down keeps its nodes in one solver group, however many they are."""
    grouped: dict[tuple[object, ...], list[LiveTaint]] = {}
    for taint in taints:
        key: tuple[object, ...] = (
            (taint.key, taint.pool, taint.device is None)
            if taint.synthetic
            else (taint.key, taint.value, taint.effect, taint.span)
        )
        grouped.setdefault(key, []).append(taint)
    pools = {pool.pool.name: pool for pool in cluster.pools}
    added = [
        _resolved(cluster, pools, members)
        for members in sorted(grouped.values(), key=lambda m: _order(m[0]))
    ]
    return dataclasses.replace(cluster, taints=(*cluster.taints, *added))


def _order(taint: LiveTaint) -> tuple[str, int, int, str, str]:
    return (taint.span.file, taint.span.line, taint.span.column, taint.where, taint.key)


def _resolved(
    cluster: ResolvedCluster, pools: dict[str, ResolvedPool], members: list[LiveTaint]
) -> ResolvedTaint:
    first = members[0]
    more = f" and {len(members) - 1} more" if len(members) > 1 else ""
    name = f"{first.where}{more} ({first.key.rsplit('/', 1)[-1]})"
    taint = _device_taint(cluster.name, name, first)
    tolerant: tuple[str, ...] = ()
    if not first.synthetic:
        tolerant = tuple(
            sorted(
                team.name
                for team in cluster.teams
                if any(tolerates(t, taint) for t in team.spec.tolerations)
            )
        )
    targets = tuple(
        TaintTarget(pools[m.pool], (m.index,), m.device)
        for m in sorted(members, key=lambda m: (m.pool, m.index, m.device or -1))
    )
    return ResolvedTaint(taint, targets, tolerant)


def _device_taint(cluster: str, name: str, taint: LiveTaint) -> DeviceTaint:
    """A DeviceTaint object for the solver and its explanations, whose source is the dump
    (its key points where the dump shows the taint). Built without validation: its name says
    what it stands for (`prod-east-l40s-5/gpu-2 (missing)`) and is never emitted."""
    effect: Literal["NoSchedule", "NoExecute"] = (
        "NoExecute" if taint.effect == "NoExecute" else "NoSchedule"
    )  # only blocking taints are in the live model
    built = DeviceTaint.model_construct(
        api_version=cast(Literal["gpufleet.dev/v1alpha1"], API_VERSION),
        kind="DeviceTaint",
        metadata=Metadata.model_construct(name=name, description=""),
        spec=DeviceTaintSpec.model_construct(
            cluster=cluster,
            pool=taint.pool,
            node=taint.index,
            device=taint.device,
            select=None,
            key=taint.key,
            value=taint.value,
            effect=effect,
        ),
    )
    position = pack_position(taint.span.line, taint.span.column)
    built._source = SourceDocument(
        file=taint.span.file,
        origin=taint.span.file,
        index=0,
        data={},
        positions={(): position, ("spec", "key"): position},
    )
    return built
