"""What drift finds: a located diagnostic, and what the difference takes from the live
capacity the guarantees are solved again on."""

from __future__ import annotations

from dataclasses import dataclass

from compiler.diagnostics import Diagnostic, Span

DRIFT_DOMAIN = "drift.gpufleet.dev"
"""The domain of the taints that stand, in the live model, for capacity the cluster lacks: a
missing node or GPU, a node not Ready, a node whose MIG layout is not the plan's. They exist
only in the solver's model (never in a cluster): "remove" one means repair what it stands for."""
MISSING, NOT_READY, MIG_LAYOUT = "missing", "not-ready", "mig-layout"
LACKS = {
    MISSING: "missing",
    NOT_READY: "not Ready",
    MIG_LAYOUT: "not in its planned MIG layout",
}
"""What each kind of capacity the cluster lacks is, in words (for explanations)."""


@dataclass(frozen=True)
class LiveTaint:
    """A taint the live model puts on devices of one node of a pool: every device of node
    `index` (device None) or GPU `device` only. `key` is the cluster's own (a health taint
    such as gpu.nvidia.com/xid) or one of DRIFT_DOMAIN (capacity that is not there, tolerated
    by nobody); `span` is where the dump shows it (or the policy, for a node the dump lacks);
    `where` names the node or GPU (`prod-east-l40s-5`, `prod-east-l40s-5/gpu-2`)."""

    pool: str
    index: int
    device: int | None
    key: str
    value: str
    effect: str
    span: Span
    where: str

    @property
    def synthetic(self) -> bool:
        """Whether it stands for missing capacity rather than a taint the cluster carries."""
        return self.key.startswith(f"{DRIFT_DOMAIN}/")


def lost(pool: str, index: int, device: int | None, what: str, where: str, span: Span) -> LiveTaint:
    """The live taint of capacity that is not there: node `index` of `pool` (GPU `device`),
    shown as `where`, for reason `what` (MISSING, NOT_READY, MIG_LAYOUT)."""
    return LiveTaint(pool, index, device, f"{DRIFT_DOMAIN}/{what}", "", "NoSchedule", span, where)


@dataclass(frozen=True)
class Finding:
    """One difference between the cluster and its policy or plan: the diagnostic (located in
    the dump, with notes pointing at the policy), the node it is about and what it takes from
    the live capacity."""

    diagnostic: Diagnostic
    node: str | None
    live: tuple[LiveTaint, ...] = ()
