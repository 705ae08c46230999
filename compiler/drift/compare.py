"""`compare`: every difference between a cluster's dump and its policy and plan, and whether
the guarantees hold on what is left."""

from __future__ import annotations

from dataclasses import dataclass

from compiler.diagnostics import Diagnostic
from compiler.drift.findings import Finding
from compiler.drift.live import live_cluster
from compiler.drift.mig import PlanSpan, mig_findings
from compiler.drift.nodes import node_findings
from compiler.drift.planned import planned_nodes
from compiler.drift.taints import taint_findings
from compiler.drift.verdict import Verdict, verdict
from compiler.inventory.dump import ClusterDump
from compiler.inventory.gpus import node_gpus
from compiler.ir import ClusterPlan, ResolvedCluster


@dataclass(frozen=True)
class Drift:
    """What drift found in one cluster: the findings (in the order they print) and the verdict
    of solving the live cluster (None when nothing found takes capacity away)."""

    cluster: ResolvedCluster
    plan: ClusterPlan
    dump: ClusterDump
    findings: tuple[Finding, ...]
    verdict: Verdict | None

    @property
    def in_sync(self) -> bool:
        """Whether the cluster runs what the policy and plan say."""
        return not self.findings

    @property
    def breaks_guarantees(self) -> bool:
        """Whether the live capacity cannot serve every guarantee."""
        return self.verdict is not None and self.verdict.plan is None

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """The findings' diagnostics, then why guarantees break (if they do)."""
        broken = list(self.verdict.broken) if self.verdict is not None else []
        return [f.diagnostic for f in self.findings] + broken


def compare(
    cluster: ResolvedCluster,
    plan: ClusterPlan,
    dump: ClusterDump,
    plan_span: PlanSpan,
    time_limit: float,
    explain_time_limit: float,
) -> Drift:
    """Compare `dump` with the cluster's policy and committed `plan`; solve the live cluster
    again when a finding takes capacity away."""
    driver = cluster.cluster.spec.driver
    planned = planned_nodes(cluster)
    published = {node.name: node_gpus(dump, node, driver) for node in dump.nodes}
    findings = [
        *node_findings(cluster, dump, planned, published, driver),
        *mig_findings(dump, planned, plan, plan_span, published, driver),
        *taint_findings(cluster, dump, planned, published, driver),
    ]
    findings.sort(key=lambda f: f.diagnostic.sort_key())
    taints = [t for f in findings for t in f.live]
    judged = (
        verdict(live_cluster(cluster, taints), plan, time_limit, explain_time_limit)
        if taints
        else None
    )
    return Drift(cluster, plan, dump, tuple(findings), judged)
