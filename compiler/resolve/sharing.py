"""Sharing made honest: which pods share a GPU, and whether the driver will share it.

A ResourceClaim made from a ResourceClaimTemplate belongs to one pod, so a tier's `sharing`
(TimeSlicing, MPS) in its claim templates shares a device only between the containers of one
pod. Pods share a device when they name the same ResourceClaim: a team's `sharedClaims` (its
own file) become such claims, in one namespace, counted against its quota like any claim.
And the NVIDIA DRA driver shares only with its own feature gate on (TimeSlicingSettings,
MPSSupport: alpha, off by default): without it every claim with that strategy fails when its
pod starts, so a cluster that does not declare the gate on (`driverFeatureGates`) is warned.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from compiler.catalog.driver import NVIDIA_DRIVER
from compiler.diagnostics import Diagnostic
from compiler.ir import ResolvedCluster
from compiler.ir.shared_claims import PlacedClaim, claim_namespace, held_limit, shared_claims
from compiler.resolve.check import FleetFacts, cluster_check, fleet_check

SHARING_GATES = {"TimeSlicing": "TimeSlicingSettings", "MPS": "MPSSupport"}
"""The NVIDIA DRA driver's feature gate for each sharing strategy (alpha, off by default;
kubernetes-sigs/dra-driver-nvidia-gpu pkg/featuregates, api/nvidia.com/resource/v1beta1
validate.go): without it the driver refuses the strategy when it prepares the claim."""


@cluster_check("GF240", "GF242", "GF608")
def check_sharing(cluster: ResolvedCluster) -> Iterator[Diagnostic]:
    """Per cluster: the driver gates of the sharing its tiers use (GF608), and what its shared
    claims ask: their tier's quota there, room for their devices (GF240), no Kueue (GF242).

    Examples (FAIL and PASS): docs/diagnostics/GF240.md, GF242.md, GF608.md."""
    placed = shared_claims(cluster)
    yield from _ungated_sharing(cluster)
    for team in cluster.teams:
        for index, claim in enumerate(team.spec.shared_claims):
            namespace = claim_namespace(team, claim)
            listed = claim.clusters is not None and cluster.name in claim.clusters
            if namespace is None or not listed:
                continue
            if held_limit(cluster, team, namespace, claim.tier) == 0:
                yield Diagnostic(
                    "GF240",
                    f"team {team.name!r}: shared claim {claim.name!r} asks for tier "
                    f"{claim.tier!r} in namespace {namespace!r} of cluster {cluster.name}, "
                    "where the namespace holds no quota for it: the tier guardrail would "
                    "refuse the claim",
                    team.source.span(("spec", "sharedClaims", index, "clusters")),
                    ("list only clusters where the namespace holds the tier's quota",),
                )

    devices: dict[tuple[str, str, str], list[PlacedClaim]] = defaultdict(list)
    for item in placed:
        devices[(item.team.name, item.namespace, item.claim.tier)].append(item)
        if cluster.cluster.spec.kueue.enabled:
            yield Diagnostic(
                "GF242",
                f"team {item.team.name!r}: shared claim {item.claim.name!r} in cluster "
                f"{cluster.name}, which runs Kueue: Kueue (0.18, 0.19) counts devices from "
                "claim templates only and holds every job whose pods name a ResourceClaim "
                "as inadmissible",
                item.team.source.span(item.path("name")),
                (
                    "leave the Kueue cluster out of the claim's `clusters`, or share "
                    "devices between the containers of one pod (a claim template)",
                ),
            )

    for (_, namespace, tier), claims in sorted(devices.items()):
        team = claims[0].team
        total = sum(c.claim.devices for c in claims)
        limit = held_limit(cluster, team, namespace, tier)
        if total > limit:
            yield Diagnostic(
                "GF240",
                f"team {team.name!r}: the shared claims of tier {tier!r} in namespace "
                f"{namespace!r} hold {total} devices in cluster {cluster.name}, beyond the "
                f"namespace's limit of {limit}: the quota would refuse the last of them "
                "(a shared claim counts against the quota for as long as it exists)",
                team.source.span(claims[-1].path("devices")),
                (f"ask for at most {limit} devices in all",),
            )


def _ungated_sharing(cluster: ResolvedCluster) -> Iterator[Diagnostic]:
    """One warning per sharing strategy the cluster's claims use without the driver's gate."""
    if cluster.cluster.spec.driver != NVIDIA_DRIVER:
        return  # sharing on another driver is GF224
    declared = cluster.cluster.spec.driver_feature_gates
    used = {g.tier for g in cluster.guarantees if g.limit > 0}
    for strategy, gate in SHARING_GATES.items():
        tiers = [
            t.tier
            for t in cluster.tiers
            if t.name in used
            and t.tier.spec.sharing == strategy
            and len({kind.is_mig for kind in t.kinds}) == 1  # else GF224
        ]
        if not tiers or declared.get(gate) is True:
            continue
        names = ", ".join(repr(t.name) for t in tiers)
        plural = "s" if len(tiers) > 1 else ""
        yield Diagnostic(
            "GF608",
            f"tier{plural} {names} share{'' if plural else 's'} devices by {strategy} in "
            f"cluster {cluster.name}, which the NVIDIA DRA driver does only with its "
            f"feature gate {gate} (alpha, off by default); the cluster does not declare it "
            f"on (driverFeatureGates), and without it every claim of the tier{plural} fails "
            "when its pod starts",
            tiers[0].source.span(("spec", "sharing")),
            (
                f"run the driver with the gate (its Helm chart's `featureGates: {{{gate}: "
                f"true}}`) and declare it in the Cluster: `driverFeatureGates: {{{gate}: "
                "true}`; or set `sharing: Exclusive`",
            ),
            (("the cluster", cluster.cluster.source.span(("metadata", "name"))),),
            cluster=cluster.name,
        )


@fleet_check("GF240", "GF241", "GF243", tested_elsewhere=("GF240",))
def check_shared_claims(facts: FleetFacts) -> Iterator[Diagnostic]:
    """Fleet-wide: each shared claim has a namespace of its team (GF240), lands in some cluster
    (GF243), names a tier that shares (GF240), and is the only claim of its name in its
    namespace (GF241).

    Examples (FAIL and PASS): docs/diagnostics/GF241.md, GF243.md. GF240's page shows
    check_sharing's case; this one's are in tests/test_sharing.py."""
    teams, clusters = facts.teams, facts.clusters
    by_name = {t.name: t for t in facts.policies.tiers}
    placed = {(p.team.name, p.index) for c in clusters for p in shared_claims(c)}
    clusters_of: dict[str, set[str]] = {}
    for cluster in clusters:
        for member in cluster.teams:
            clusters_of.setdefault(member.name, set()).add(cluster.name)
    for team in teams:
        present = clusters_of.get(team.name, set())
        seen: dict[tuple[str, str], int] = {}
        for index, claim in enumerate(team.spec.shared_claims):
            path = ("spec", "sharedClaims", index)
            namespace = claim_namespace(team, claim)
            if namespace is None:
                where = (
                    f"namespace {claim.namespace!r} is not the team's"
                    if claim.namespace is not None
                    else "the team has several namespaces and the claim names none"
                )
                yield Diagnostic(
                    "GF240",
                    f"team {team.name!r}: shared claim {claim.name!r} has no namespace: {where}",
                    team.source.span((*path, "namespace")),
                    (f"namespaces: {', '.join(team.spec.namespaces)}",),
                )

                continue
            first = seen.setdefault((namespace, claim.name), index)
            if first != index:
                yield Diagnostic(
                    "GF243",
                    f"team {team.name!r}: two shared claims are named {claim.name!r} in "
                    f"namespace {namespace!r}",
                    team.source.span((*path, "name")),
                    ("give each shared claim of a namespace its own name",),
                    (
                        (
                            "the other",
                            team.source.span(("spec", "sharedClaims", first, "name")),
                        ),
                    ),
                )

            tier = by_name.get(claim.tier)
            if tier is not None and tier.spec.sharing == "Exclusive":
                yield Diagnostic(
                    "GF241",
                    f"team {team.name!r}: shared claim {claim.name!r} asks for tier "
                    f"{tier.name!r}, whose devices are not shared (sharing: Exclusive): "
                    "every pod naming the claim would get the same GPUs with no sharing "
                    "configured",
                    team.source.span((*path, "tier")),
                    (
                        "use a tier with `sharing: TimeSlicing` or `MPS`, or give each pod "
                        "its own devices from a claim template",
                    ),
                    (("the tier", tier.source.span(("spec", "sharing"))),),
                )

            for position, name in enumerate(claim.clusters or ()):
                if name not in present:
                    yield Diagnostic(
                        "GF240",
                        f"team {team.name!r}: shared claim {claim.name!r} lists cluster "
                        f"{name!r}, which the team is not in",
                        team.source.span((*path, "clusters", position)),
                        (f"the team's clusters: {', '.join(sorted(present)) or '(none)'}",),
                    )

            if (team.name, index) not in placed and claim.clusters is None:
                held = sorted(
                    {g.tier for c in clusters for g in c.guarantees if g.namespace == namespace}
                )
                yield Diagnostic(
                    "GF240",
                    f"team {team.name!r}: shared claim {claim.name!r} asks for tier "
                    f"{claim.tier!r}, which namespace {namespace!r} holds no quota for in "
                    "any cluster",
                    team.source.span((*path, "tier")),
                    (f"tiers of the namespace: {', '.join(held) or '(none)'}",),
                )
