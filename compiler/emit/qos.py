"""Memory QoS: per team namespace a LimitRange and a host ResourceQuota, per node pool a
kubelet drop-in.

The host quota follows the device quota: a namespace may hold `limit` devices of each tier,
so it may request that many devices' host shares (`requests.cpu`, `requests.memory`; with the
guarantee alone, borrowing devices would leave their pods no CPU to run on). A team asking for
Guaranteed QoS gets limits equal to requests (`limits.memory` = `requests.memory`, and a
LimitRange that defaults limits to requests and forbids a memory limit above the request); a
Burstable team may burst to the node's fair memory share per device.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from compiler.emit.manifest import Manifest, provenance
from compiler.emit.namespaces import TEAM_LABEL
from compiler.emit.render import Block
from compiler.emit.waves import WAVES
from compiler.ir import Guarantee, ResolvedCluster
from compiler.quantity import format_bytes, format_decimal
from compiler.resolve.gpu_nodes import pool_taint
from compiler.resolve.host import HostShare, fair_share, host_share
from compiler.versions import Feature, target

HOST_QUOTA = "gpufleet-host"
LIMIT_RANGE = "gpufleet-defaults"
KUBELET_DROPIN = "50-gpufleet.conf"
DEFAULT_EVICTION_HARD = {
    "memory.available": "100Mi",
    "nodefs.available": "10%",
    "nodefs.inodesFree": "5%",
    "imagefs.available": "15%",
    "imagefs.inodesFree": "5%",
}
"""The kubelet's hard eviction signals on Linux when nothing sets `evictionHard`
(k8s.io/kubernetes pkg/kubelet/eviction/defaults_linux.go, the same in 1.32-1.37).

A drop-in that sets `evictionHard` lists them all, its own memory threshold in place of the
default. The kubelet merges drop-ins into its config as a JSON merge patch, so a drop-in's
map adds to the `evictionHard` of the --config file; but a kubelet started without a --config
file, or whose file lists fewer signals, would keep only the drop-in's, and every other
signal (disk and inode pressure) would be off. `mergeDefaultEvictionSettings: true` (1.33+)
does not help a drop-in: the kubelet applies it only while loading its --config file
(cmd/kubelet/app/server.go `loadConfigFile`), before any drop-in is merged."""


@dataclass(frozen=True)
class HostQuota:
    """A namespace's host quota and container defaults, in cores and bytes."""

    requests: HostShare
    limits_memory: Fraction
    default_request: HostShare
    default_limit_memory: Fraction
    guaranteed: bool


@dataclass(frozen=True)
class TierHost:
    """What one device of a tier comes with on the host, and what its pods may burst to."""

    share: HostShare
    burst_memory: Fraction
    """The node's fair memory share per device, at least the request."""


def tier_hosts(cluster: ResolvedCluster) -> dict[str, TierHost]:
    """Each tier's host share and burst memory in `cluster`, by tier name."""
    hosts = {}
    for tier in cluster.tiers:
        fair = fair_share(cluster, tier)
        share = host_share(cluster, tier, fair)
        hosts[tier.tier.name] = TierHost(share, max(share.memory, fair.memory))
    return hosts


def host_quota(
    held: list[Guarantee], hosts: dict[str, TierHost], guaranteed: bool
) -> HostQuota | None:
    """The host quota of a namespace holding the guarantees `held` (None when it holds none)."""
    if not held:
        return None
    shares = [hosts[g.tier].share for g in held]
    bursts = [hosts[g.tier].burst_memory for g in held]
    requests = HostShare(
        sum((s.cpu * g.limit for s, g in zip(shares, held, strict=True)), Fraction(0)),
        sum((s.memory * g.limit for s, g in zip(shares, held, strict=True)), Fraction(0)),
    )
    default_request = HostShare(min(s.cpu for s in shares), min(s.memory for s in shares))
    return HostQuota(
        requests=requests,
        limits_memory=(
            requests.memory
            if guaranteed
            else sum((b * g.limit for b, g in zip(bursts, held, strict=True)), Fraction(0))
        ),
        default_request=default_request,
        default_limit_memory=default_request.memory if guaranteed else min(bursts),
        guaranteed=guaranteed,
    )


def _cpu(value: Fraction) -> str:
    return format_decimal(value)


def namespace_qos(cluster: ResolvedCluster) -> list[Manifest]:
    """A LimitRange and a host ResourceQuota per team namespace that holds device quota."""
    manifests = []
    hosts = tier_hosts(cluster)
    held: dict[tuple[str, str], list[Guarantee]] = defaultdict(list)
    for guarantee in cluster.guarantees:
        held[(guarantee.team.name, guarantee.namespace)].append(guarantee)
    for team in cluster.teams:
        guaranteed = team.spec.memory_qos == "guaranteed"
        for namespace in team.spec.namespaces:
            quota = host_quota(held.get((team.name, namespace), []), hosts, guaranteed)
            if quota is None:
                continue
            common: dict[str, Any] = {
                "cluster": cluster.name,
                "namespace": namespace,
                "labels": {TEAM_LABEL: team.name},
            }
            hard = {
                "requests.cpu": _cpu(quota.requests.cpu),
                "requests.memory": format_bytes(quota.requests.memory),
                "limits.memory": format_bytes(quota.limits_memory),
            }
            manifests.append(
                Manifest(
                    kind="ResourceQuota",
                    name=HOST_QUOTA,
                    template="resourcequota.yaml.j2",
                    values={"hard": dict(sorted(hard.items()))},
                    annotations=provenance(team.source.origin, "memoryQoS", WAVES["ResourceQuota"]),
                    **common,
                )
            )
            default = {"memory": format_bytes(quota.default_limit_memory)}
            if quota.guaranteed:
                default["cpu"] = _cpu(quota.default_request.cpu)
            manifests.append(
                Manifest(
                    kind="LimitRange",
                    name=LIMIT_RANGE,
                    template="limitrange.yaml.j2",
                    values={
                        "default_request": {
                            "cpu": _cpu(quota.default_request.cpu),
                            "memory": format_bytes(quota.default_request.memory),
                        },
                        "default": dict(sorted(default.items())),
                        "max_ratio": {"memory": "1"} if quota.guaranteed else {},
                    },
                    annotations=provenance(team.source.origin, "memoryQoS", WAVES["LimitRange"]),
                    **common,
                )
            )
    return manifests


def _decimal(value: float) -> Block:
    """A float as a plain YAML number (shortest form that reads back the same)."""
    text = repr(float(value))
    float(text)  # a float repr is always a valid YAML float literal
    return Block(text)


def kubelet_dropins(cluster: ResolvedCluster) -> dict[str, Manifest]:
    """Per node pool, a KubeletConfiguration drop-in (path below out/ -> manifest).

    Written to node-config/, not synced: it goes into the kubelet's `--config-dir`
    (drop-ins must end in .conf). A pool gets one when the cluster's kubelet settings differ
    from the defaults or the pool has a node taint (`registerWithTaints`).
    """
    kubelet = cluster.cluster.spec.kubelet
    reservations = (kubelet.system_reserved, kubelet.kube_reserved)
    settings = (
        kubelet.memory_qos
        or kubelet.eviction_hard_memory is not None
        or any(r.cpu is not None or r.memory is not None for r in reservations)
    )
    if not settings and all(pool_taint(pool) is None for pool in cluster.pools):
        return {}
    row = target(cluster.cluster.spec.kubernetes_version)

    def amounts(cpu: Fraction | None, memory: Fraction | None) -> dict[str, str]:
        found = {}
        if cpu is not None:
            found["cpu"] = _cpu(cpu)
        if memory is not None:
            found["memory"] = format_bytes(memory)
        return found

    values = {
        "memory_qos": kubelet.memory_qos,
        "throttling_factor": _decimal(kubelet.memory_throttling_factor),
        "reservation_policy": (
            "TieredReservation"
            if kubelet.memory_qos and row.has(Feature.MEMORY_RESERVATION_POLICY)
            else None
        ),
        "system_reserved": amounts(kubelet.system_reserved.cpu, kubelet.system_reserved.memory),
        "kube_reserved": amounts(kubelet.kube_reserved.cpu, kubelet.kube_reserved.memory),
        "eviction_hard": (
            {}
            if kubelet.eviction_hard_memory is None
            else {
                **DEFAULT_EVICTION_HARD,
                "memory.available": format_bytes(kubelet.eviction_hard_memory),
            }
        ),
    }
    files: dict[str, Manifest] = {}
    for pool in cluster.pools:
        taint = pool_taint(pool)
        if not settings and taint is None:
            continue
        manifest = Manifest(
            kind="KubeletConfiguration",
            name=pool.pool.name,
            template="kubelet_dropin.yaml.j2",
            values={
                **values,
                "cluster": cluster.name,
                "pool": pool.pool.name,
                "taint": None if taint is None else taint.model_dump(),
            },
            directory=f"clusters/{cluster.name}/node-config/kubelet/{pool.pool.name}",
        )
        files[f"{manifest.directory}/{KUBELET_DROPIN}"] = manifest
    return files
