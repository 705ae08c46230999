"""The report's sections that compare with a previous out/: what can hurt, capacity before and
after, and the files that move. Each section is one function returning Markdown lines."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from compiler.ir import ClusterPlan
from compiler.report.capacity import (
    capacity_chart,
    capacity_rows,
    capacity_table,
    chart_caption,
)
from compiler.report.diff import FileChange, group_of, summary_line
from compiler.report.hurt import NOTHING_HURTS, Hurt
from compiler.report.tables import table


def hurt_section(hurts: Sequence[Hurt], label: str, compared: bool) -> list[str]:
    """`## What can hurt`: one bullet per hurt, most severe first, or one line saying that
    nothing can (and why, when there was no previous plan to compare with)."""
    lines = ["## What can hurt", ""]
    if hurts:
        lines += [f"Compared with `{label}`, most severe first.", ""]
        lines += [f"- **{h.cluster}**: {h.sentence}" for h in hurts]
    elif compared:
        lines += [NOTHING_HURTS]
    else:
        lines += [f"Nothing can hurt that a plan would show: no previous plan in `{label}`."]
    return [*lines, ""]


def capacity_section(
    previous: Mapping[str, ClusterPlan], plans: Sequence[ClusterPlan]
) -> list[str]:
    """`## Capacity before and after`: a chart per cluster, then the same numbers as a table."""
    rows = capacity_rows(previous, plans)
    lines = ["## Capacity before and after", "", chart_caption(), ""]
    for cluster in sorted({row.cluster for row in rows}):
        lines += [*capacity_chart(cluster, [r for r in rows if r.cluster == cluster]), ""]
    header = ["Cluster", "Tier", "Guaranteed", "Borrowable", "Tainted", "Free", "Raw"]
    lines += [
        "Devices per tier, `before -> after` where they move. Tainted: carrying a blocking "
        "taint and guaranteed to nobody; free: usable and guaranteed to nobody (borrowable "
        "and the tainted devices some holder tolerates).",
        "",
        *table(header, capacity_table(rows), (2, 3, 4, 5, 6)),
        "",
    ]
    return lines


def files_section(changes: Sequence[FileChange]) -> list[str]:
    """`## Files`: per cluster what changes in out/, and each file that moves."""
    groups: dict[str, list[FileChange]] = {}
    for change in changes:
        groups.setdefault(group_of(change.path), []).append(change)
    lines = ["## Files", ""]
    if not groups:
        return [*lines, "Nothing changes in out/.", ""]
    lines += [f"- {summary_line(group, groups[group], ())}" for group in sorted(groups)]
    renamed = [c for c in changes if c.status == "renamed"]
    if renamed:
        lines += ["", "Renamed (moved):", ""]
        lines += [f"- `{c.moved_from}` -> `{c.path}`" for c in renamed]
    return [*lines, ""]
