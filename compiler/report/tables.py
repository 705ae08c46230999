"""GitHub Markdown tables, the one way the report lays out numbers."""

from __future__ import annotations

from collections.abc import Sequence


def table(
    header: Sequence[str], rows: Sequence[Sequence[object]], right: Sequence[int] = ()
) -> list[str]:
    """A GitHub Markdown table; the columns numbered in `right` (numbers) align right."""
    align = ["--:" if i in right else ":--" for i in range(len(header))]
    lines = [f"| {' | '.join(header)} |", f"| {' | '.join(align)} |"]
    lines.extend(f"| {' | '.join(str(cell) for cell in row)} |" for row in rows)
    return lines
