"""The drift report as Markdown, for an issue or a pull-request comment: the verdict first,
then each finding, why guarantees break (with the fixes `gpufleet check` would offer), and the
live capacity per tier. Pure: a Drift in, text out; every value from the dump is escaped."""

from __future__ import annotations

from compiler.diagnostics import CODES, Diagnostic
from compiler.diagnostics.codes import help_uri
from compiler.diagnostics.terminal import visible
from compiler.drift.compare import Drift
from compiler.report.tables import table

MAX_ROWS = 50
"""Findings listed in the table; a comment or issue body holds at most 65,536 characters, and
a rack down must not make the report unpostable."""
MARKER = "<!-- gpufleet-drift:{cluster} -->"
"""The first line of a cluster's section: a CI job finds its earlier comment by it."""


def drift_markdown(drift: Drift, dump: str, plan: str) -> str:
    """The Markdown section of one cluster's drift (`dump` and `plan` as the reader knows
    them: the dump's file, the plan's path)."""
    name = drift.cluster.name
    lines = [MARKER.format(cluster=name), f"## Drift: cluster {name}", ""]
    count = len(drift.findings)
    differences = f"{count} difference{'' if count == 1 else 's'}"
    if drift.in_sync:
        lines.append("**In sync** (exit 0): the cluster runs what the policy and its plan say.")
    elif drift.breaks_guarantees:
        lines.append(
            f"**A guarantee no longer holds** (exit 2): {differences} from the policy and its "
            "plan, and the capacity left cannot serve every guarantee."
        )
    else:
        lines.append(
            f"**Drifted; every guarantee still holds** (exit 1): {differences} from the policy "
            "and its plan."
        )
    if drift.findings:
        lines += ["", *_findings(drift), "", "**What to do**", "", *_what_to_do(drift)]
    if drift.verdict is not None:
        for broken in drift.verdict.broken:
            lines += ["", *_broken(broken)]
        if drift.verdict.plan is not None:
            lines += ["", *_capacity(drift)]
    dumped = drift.dump
    lines += [
        "",
        f"<sub>gpufleet drift compared {_cell(dump)} ({_count(len(dumped.nodes), 'Node')}, "
        f"{_count(len(dumped.slices), 'ResourceSlice')}, "
        f"{_count(len(dumped.taint_rules), 'DeviceTaintRule')}) with the policy and "
        f"{_cell(plan)}.</sub>",
    ]
    return "\n".join(lines) + "\n"


def _findings(drift: Drift) -> list[str]:
    rows = [
        (
            f"{f.diagnostic.code} {CODES[f.diagnostic.code].name}",
            _cell(f.node or ""),
            _cell(f.diagnostic.message),
            _cell(str(f.diagnostic.span or "")),
        )
        for f in drift.findings[:MAX_ROWS]
    ]
    lines = table(("Finding", "Node", "What", "Where"), rows)
    left = len(drift.findings) - MAX_ROWS
    if left > 0:
        lines += ["", f"... and {left} more: the job's log (the diagnostics) lists every one."]
    return lines


def _what_to_do(drift: Drift) -> list[str]:
    """Per code found, how many findings and its first hint, linking the code's page."""
    by_code: dict[str, list[Diagnostic]] = {}
    for finding in drift.findings:
        by_code.setdefault(finding.diagnostic.code, []).append(finding.diagnostic)
    lines = []
    for code, found in by_code.items():
        hint = next((d.hints[0] for d in found if d.hints), "")
        lines.append(
            f"- [{code}]({help_uri(code)}) {CODES[code].name} ({len(found)}): {_cell(hint)}"
        )
    return lines


def _broken(diagnostic: Diagnostic) -> list[str]:
    lines = ["### Why a guarantee no longer holds", "", _cell(diagnostic.message), ""]
    lines += [f"- {_cell(hint)}" for hint in diagnostic.hints]
    lines += [f"- note: {_cell(text)} ({_cell(str(span))})" for text, span in diagnostic.related]
    return lines


def _capacity(drift: Drift) -> list[str]:
    assert drift.verdict is not None and drift.verdict.plan is not None
    live = {t.tier: t for t in drift.verdict.plan.tiers}
    rows = []
    for planned in drift.plan.tiers:
        now = live.get(planned.tier)
        if now is None:
            continue
        rows.append(
            (
                planned.tier,
                planned.usable,
                now.usable,
                now.guaranteed,
                now.usable - now.guaranteed,
            )
        )
    header = ("Tier", "Usable (plan)", "Usable (live)", "Guaranteed", "Headroom (live)")
    return ["### Live capacity per tier", "", *table(header, rows, right=(1, 2, 3, 4))]


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _cell(text: str) -> str:
    """Text from the dump made safe in a table cell: one line, no HTML, no column breaks."""
    shown = visible(text).replace("\n", " ")
    for raw, escaped in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("|", "\\|")):
        shown = shown.replace(raw, escaped)
    return shown
