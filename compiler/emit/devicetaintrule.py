"""DeviceTaintRules: one per device taint, or one per node (and device) it covers.

A DeviceTaintRule selects devices by driver, DRA pool and device name only (1.35 removed the
class and CEL selectors). The NVIDIA driver publishes one DRA pool per node, named after the
node, so a taint on a whole cluster is one rule selecting the driver, and any narrower taint
is one rule per covered node (`pool` = the node name). A taint on one GPU also names the MIG
devices that GPU can carry when its pool may be partitioned: the driver names them
`gpu-<index>-mig-<profile without dots>-<GI profile id>-<placement start>`.

A rule is named `<taint>.<node>` or `<taint>.<node>.<device>`: taint and device names have no
dot, so the first and last dots say where the node name (which may have dots) begins and ends,
and two rules never share a name. A name past 253 characters is shortened with a digest.
"""

from __future__ import annotations

from compiler.catalog.driver import gpu_device_name, mig_device_name
from compiler.emit.manifest import Manifest, provenance
from compiler.emit.view import ClusterView
from compiler.emit.waves import WAVES
from compiler.emit.yaml_writer import present, spec_yaml
from compiler.ir import ResolvedCluster, ResolvedPool, ResolvedTaint
from compiler.ir.sync_options import SKIP_DRY_RUN
from compiler.names import DNS_SUBDOMAIN_MAX, shortened
from compiler.versions import Feature


def device_names(pool: ResolvedPool, index: int) -> list[str]:
    """Every device name GPU `index` of a node of `pool` can be published under."""
    names = [gpu_device_name(index)]
    mig = pool.model.mig
    if pool.pool.mig != "disabled" and mig is not None:
        for profile in mig.profiles:
            names.extend(
                mig_device_name(index, profile.name, profile.gi_profile_id, start)
                for start in profile.starts
            )
    return names


def rule_name(taint: str, node: str, device: str | None = None) -> str:
    """The DeviceTaintRule name of a taint on one node (or one device of it): a DNS
    subdomain, distinct for every (taint, node, device), shortened when too long."""
    parts = (taint, node) if device is None else (taint, node, device)
    return shortened(".".join(parts), DNS_SUBDOMAIN_MAX)


Selector = tuple[str, str | None, str | None]


def _selectors(cluster: ResolvedCluster, taint: ResolvedTaint) -> list[Selector]:
    """(rule name, DRA pool, device) for each rule the taint needs."""
    whole = all(t.nodes is None and t.device is None for t in taint.targets)
    if whole and {t.pool.pool.name for t in taint.targets} == {p.pool.name for p in cluster.pools}:
        return [(taint.name, None, None)]
    rules: list[Selector] = []
    for covered in taint.targets:
        for node in covered.node_indices:
            node_name = cluster.node_name(covered.pool, node)
            if covered.device is None:
                rules.append((rule_name(taint.name, node_name), node_name, None))
                continue
            for device in device_names(covered.pool, covered.device):
                rules.append((rule_name(taint.name, node_name, device), node_name, device))
    return rules


def emit(view: ClusterView) -> list[Manifest]:
    """The DeviceTaintRules of every device taint of the cluster; none where the cluster does
    not serve the kind (resolve warns, GF603: one unserved object fails the whole sync)."""
    cluster = view.cluster
    if not cluster.serves(Feature.DEVICE_TAINT_RULES):
        return []
    api = cluster.target.taint_rule_api
    manifests = []
    for taint in cluster.taints:
        spec = taint.taint.spec
        for name, pool, device in _selectors(cluster, taint):
            manifests.append(
                Manifest(
                    kind="DeviceTaintRule",
                    name=name,
                    builder=spec_yaml,
                    values={
                        "api_version": api,
                        "spec": {
                            "deviceSelector": {
                                "driver": cluster.cluster.spec.driver,
                                **present(pool=pool, device=device),
                            },
                            "taint": {
                                "key": spec.key,
                                **present(value=spec.value),
                                "effect": spec.effect,
                            },
                        },
                    },
                    cluster=cluster.name,
                    labels={"gpufleet.dev/taint": taint.name},
                    annotations={
                        **provenance(taint.taint.source.origin, "spec", WAVES["DeviceTaintRule"]),
                        **SKIP_DRY_RUN,
                    },
                )
            )
    return manifests
