"""Check each cluster's use of Kubernetes features against its version (compiler.versions).

A feature the version lacks is an error at every clause that uses it; a feature that is off
by default there is one warning per cluster naming the gates and runtime config to enable,
unless the cluster declares them on (`apiServer`). An API kind the cluster does not serve is
left out of its output (GF603), since one object of an unserved kind fails the whole sync.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass

from compiler.diagnostics import Diagnostic, Span
from compiler.ir import ResolvedCluster
from compiler.ir.claims import cluster_tolerations, quota_fallbacks, usable_fallbacks
from compiler.resolve.check import cluster_check
from compiler.versions import (
    OBJECT_FEATURES,
    Feature,
    Gated,
    declaration_advice,
    earliest,
    gate_advice,
    target,
)


@dataclass(frozen=True)
class Use:
    """One clause of the policy that needs a feature in one cluster."""

    feature: Feature
    span: Span
    what: str
    left_out: str = ""
    """For an API kind (OBJECT_FEATURES): what the cluster loses while it is not served."""


def feature_uses(cluster: ResolvedCluster, features: Collection[Feature]) -> list[Use]:
    """Every clause of the policy that needs one of `features` in this cluster, in a stable
    order (the clauses of other features are not looked at: check_features asks for those
    the cluster lacks, a few of a cluster's dozens of uses)."""
    spec_source = cluster.cluster.source
    uses: list[Use] = []
    if cluster.tiers and Feature.DRA in features:
        uses.append(
            Use(
                Feature.DRA,
                spec_source.span(("spec", "kubernetesVersion")),
                f"the DeviceClasses and claim templates of cluster {cluster.name}",
            )
        )
    for guarantee in cluster.guarantees if Feature.PRIORITIZED_LIST in features else ():
        kept, _ = usable_fallbacks(cluster, guarantee)
        if kept:
            fallen = cluster.tier(guarantee.tier).tier
            uses.append(
                Use(
                    Feature.PRIORITIZED_LIST,
                    fallen.source.span(("spec", "fallbacks")),
                    f"the fallbacks ({', '.join(kept)}) of tier {fallen.name!r} in the claim "
                    f"templates of team {guarantee.team.name!r}",
                )
            )
    holders = {g.team.name for g in cluster.guarantees}
    for team in cluster.teams if Feature.DEVICE_TOLERATIONS in features else ():
        if team.name in holders and cluster_tolerations(cluster, team.spec.tolerations):
            uses.append(
                Use(
                    Feature.DEVICE_TOLERATIONS,
                    team.source.span(("spec", "tolerations")),
                    f"the device tolerations of team {team.name!r}",
                )
            )
    for taint in cluster.taints:
        source = taint.taint.source
        if Feature.DEVICE_TAINT_RULES in features:
            uses.append(
                Use(
                    Feature.DEVICE_TAINT_RULES,
                    source.span(("spec", "key")),
                    f"device taint {taint.name!r}",
                    "the taint is not enforced in the cluster: claims may get its devices (the "
                    "capacity model still counts them as tainted)",
                )
            )
        if taint.taint.spec.effect == "None" and Feature.TAINT_EFFECT_NONE in features:
            uses.append(
                Use(
                    Feature.TAINT_EFFECT_NONE,
                    source.span(("spec", "effect")),
                    f"device taint {taint.name!r} (effect None)",
                )
            )
    for tier in cluster.tiers if Feature.EXTENDED_RESOURCE in features else ():
        if tier.tier.spec.extended_resource_name is not None:
            uses.append(
                Use(
                    Feature.EXTENDED_RESOURCE,
                    tier.tier.source.span(("spec", "extendedResourceName")),
                    f"the extendedResourceName of tier {tier.name!r}",
                )
            )
    for team in cluster.teams:
        if team.spec.priorities and Feature.MUTATING_ADMISSION_POLICY in features:
            uses.append(
                Use(
                    Feature.MUTATING_ADMISSION_POLICY,
                    team.source.span(("spec", "priorities")),
                    f"the default priority of team {team.name!r}",
                    "pods that name no PriorityClass run at priority 0 instead of their team's "
                    "default",
                )
            )
        if team.spec.admin_access and Feature.ADMIN_ACCESS in features:
            uses.append(
                Use(
                    Feature.ADMIN_ACCESS,
                    team.source.span(("spec", "adminAccess")),
                    f"the adminAccess of team {team.name!r}",
                )
            )
    tainted = [i for i, p in enumerate(cluster.cluster.spec.node_pools) if p.node_taint]
    if tainted and cluster.namespace_node_taints and Feature.MUTATING_ADMISSION_POLICY in features:
        uses.append(
            Use(
                Feature.MUTATING_ADMISSION_POLICY,
                spec_source.span(("spec", "nodePools", tainted[0], "nodeTaint")),
                f"the GPU node toleration of the pods that claim devices in cluster {cluster.name}",
                "pods that claim devices are not given the toleration of their GPU nodes' "
                "taint: they must carry it themselves"
                + (
                    " (Kueue adds it to the pods of the jobs it admits)"
                    if cluster.cluster.spec.kueue.enabled
                    else ""
                ),
            )
        )
    if cluster.cluster.spec.kubelet.memory_qos and Feature.MEMORY_QOS in features:
        uses.append(
            Use(
                Feature.MEMORY_QOS,
                spec_source.span(("spec", "kubelet", "memoryQoS")),
                f"memory QoS on the nodes of cluster {cluster.name}",
            )
        )
    if (
        cluster.cluster.spec.gang_scheduling == "Workload"
        and Feature.GANG_WORKLOADS in features
        and any(g.gang > 1 for g in cluster.guarantees)
    ):
        uses.append(
            Use(
                Feature.GANG_WORKLOADS,
                spec_source.span(("spec", "gangScheduling")),
                f"the gang Workloads of cluster {cluster.name}",
                "the pods of a gang are scheduled one by one, not all or nothing (the gang "
                "claim templates still keep one pod's devices together)",
            )
        )
    return uses


@cluster_check("GF220", "GF600", "GF603")
def check_features(cluster: ResolvedCluster) -> Iterator[Diagnostic]:
    """Errors for features the cluster's version lacks (GF220), warnings for gated ones (GF600,
    GF603 for a kind left out).

    Examples (FAIL and PASS): docs/diagnostics/GF220.md, GF600.md, GF603.md."""
    version = cluster.cluster.spec.kubernetes_version
    row = target(version)
    declared = cluster.cluster.spec.api_server
    version_span = cluster.cluster.source.span(("spec", "kubernetesVersion"))
    warned: set[tuple[Feature, str]] = set()
    """One warning per feature and consequence (a kind left out may cost several things)."""
    lacking = {feature for feature in Feature if not row.enabled(feature, declared)}
    for use in feature_uses(cluster, lacking):
        availability = row.availability(use.feature)
        if availability is None:
            yield Diagnostic(
                "GF220",
                f"{use.what} needs {use.feature.value}, which Kubernetes {version} "
                f"(cluster {cluster.name}) does not have; it exists from "
                f"{earliest(use.feature)}",
                use.span,
                ("raise the cluster's kubernetesVersion, or remove the clause",),
                (("the cluster's version", version_span),),
            )

            continue
        if (
            not isinstance(availability, Gated)
            or row.enabled(use.feature, declared)
            or (use.feature, use.left_out) in warned
        ):
            continue
        warned.add((use.feature, use.left_out))
        if use.feature in OBJECT_FEATURES:
            yield Diagnostic(
                "GF603",
                f"{use.what} needs {use.feature.value}, which Kubernetes {version} does not "
                f"serve by default and cluster {cluster.name} does not declare on: gpufleet "
                f"leaves them out of the cluster, so {use.left_out}",
                use.span,
                (
                    f"{gate_advice(availability)}, and declare it in the cluster's "
                    f"`apiServer` ({declaration_advice(availability)})",
                ),
                (("the cluster's version", version_span),),
                cluster=cluster.name,
            )

        else:
            yield Diagnostic(
                "GF600",
                f"{use.what} needs {use.feature.value}, which is {availability.stage} and "
                f"off by default in Kubernetes {version} (cluster {cluster.name}): feature "
                f"gate{'s' if len(availability.gates) > 1 else ''} "
                f"{', '.join(availability.gates)}",
                use.span,
                (gate_advice(availability),),
                (("the cluster's version", version_span),),
                cluster=cluster.name,
            )


@cluster_check("GF601", "GF602")
def check_fallback_quotas(cluster: ResolvedCluster) -> Iterator[Diagnostic]:
    """Warn where a team's templates leave a fallback out: for want of quota (GF601), or
    because the cluster runs Kueue, which admits no claim with alternatives (GF602, once per
    cluster).

    Examples (FAIL and PASS): docs/diagnostics/GF601.md, GF602.md."""
    kueue_warned = False
    for guarantee in cluster.guarantees:
        kept, dropped = quota_fallbacks(cluster, guarantee)
        for name in dropped:
            yield Diagnostic(
                "GF601",
                f"team {guarantee.team.name!r}, namespace {guarantee.namespace!r}: fallback "
                f"{name!r} of tier {guarantee.tier!r} is left out of the claim templates in "
                f"cluster {cluster.name}: the namespace holds no {name!r} quota, and a claim "
                "with alternatives is charged against every alternative's DeviceClass",
                guarantee.span,
                (f"give the team a quota for tier {name!r} in {guarantee.namespace!r}",),
                cluster=cluster.name,
                team=guarantee.team.name,
            )

        if kept and cluster.cluster.spec.kueue.enabled and not kueue_warned:
            kueue_warned = True
            yield Diagnostic(
                "GF602",
                f"cluster {cluster.name} runs Kueue, which admits no workload whose claim "
                f"offers alternatives: the claim templates of tier {guarantee.tier!r} (and "
                f"any other tier with fallbacks) ask for their own tier only, without the "
                f"fallbacks ({', '.join(kept)}); jobs use each fallback tier through its "
                "own template",
                cluster.tier(guarantee.tier).tier.source.span(("spec", "fallbacks")),
                (
                    "the guarantees hold without fallbacks; drop the tier's fallbacks to "
                    "silence this, or run the cluster without Kueue to keep them",
                ),
                cluster=cluster.name,
            )
