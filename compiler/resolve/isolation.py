"""Namespaces no team may own: Kubernetes' own, the platform's GPU components' and Argo CD's.

A Team compiles to a Namespace object, quotas and guardrails in each namespace it lists, so a
team listing `kube-system` would relabel it and cap its devices, one listing the GPU operator's
or the DRA driver's namespace would deny the driver's own pods their GPUs, and one listing Argo
CD's namespace would put gpufleet's quota on the controller that syncs every other team.
"""

from __future__ import annotations

from collections.abc import Iterator

from compiler.diagnostics import Diagnostic
from compiler.model.fleet import Fleet, SystemNamespaces
from compiler.resolve.check import FleetFacts, fleet_check

KUBERNETES_NAMESPACES = frozenset({"default", "kube-node-lease", "kube-public", "kube-system"})
RESERVED_PREFIX = "kube-"
"""Kubernetes reserves the `kube-` prefix for its own namespaces."""


def reserved_namespaces(fleet: Fleet | None) -> dict[str, str]:
    """Namespace names teams may not claim, each with the reason why."""
    reserved = {name: "a Kubernetes system namespace" for name in KUBERNETES_NAMESPACES}
    system = fleet.spec.system_namespaces if fleet is not None else SystemNamespaces()
    for field, component in (
        ("gpu_operator", "the NVIDIA GPU operator"),
        ("dra_driver", "the NVIDIA DRA driver"),
        ("kueue", "Kueue"),
    ):
        alias = SystemNamespaces.model_fields[field].alias
        reserved[getattr(system, field)] = (
            f"where {component} runs (Fleet spec.systemNamespaces.{alias})"
        )
    if fleet is not None:
        argocd = fleet.spec.gitops.argocd_namespace
        reserved[argocd] = "the namespace Argo CD runs in (Fleet spec.gitops.argocdNamespace)"
        for name in fleet.spec.reserved_namespaces:
            reserved[name] = "reserved by the fleet (Fleet spec.reservedNamespaces)"
    return reserved


@fleet_check("GF123")
def check_namespaces(facts: FleetFacts) -> Iterator[Diagnostic]:
    """Report every namespace a grant gives that is reserved or has the `kube-` prefix (even
    one the team's own file leaves unused: the grant is what the platform wrote): GF123.

    Examples (FAIL and PASS): docs/diagnostics/GF123.md."""
    reserved = reserved_namespaces(facts.policies.fleet)
    for team in facts.teams:
        for index, namespace in enumerate(team.grant.spec.namespaces):
            reason = reserved.get(namespace)
            if reason is None and namespace.startswith(RESERVED_PREFIX):
                reason = "in the `kube-` prefix Kubernetes reserves for itself"
            if reason is not None:
                yield Diagnostic(
                    "GF123",
                    f"team {team.name!r} may not own namespace {namespace!r}: it is {reason}",
                    team.grant.source.span(("spec", "namespaces", index)),
                    ("teams own namespaces of their own; choose another name",),
                )
