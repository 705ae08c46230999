"""Capacity per tier and cluster before and after a change: a table to read, a chart to look at.

Each tier's raw devices split three ways, each device counted once: guaranteed (promised to a
team), borrowable (untainted, promised to nobody: what the Kueue cohort lends to anyone) and
tainted (a blocking taint, promised to nobody: only tolerating teams can use them). Free is
the usable devices promised to nobody (the report's headroom), so it overlaps the other two.

The chart is a Mermaid `xychart-beta` (Mermaid 10.6 and later, which GitHub renders), drawn
with the grammar of its first release only: the header with an orientation, `title`, `x-axis`
with quoted categories, `y-axis` with a title and a range, and `bar` series. That release
has no stacked bars and no legend: bars of one category are drawn over each other, so the
series are running totals, largest first, which shows as a stack; the colours are set by
the init directive and named in the text above the chart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from compiler.ir import ClusterPlan, TierCapacity

SEGMENTS = (
    ("guaranteed", "#0969da", "blue"),
    ("borrowable", "#2da44e", "green"),
    ("tainted", "#bf8700", "amber"),
)
"""The stacked segments from the bottom: name, colour and the colour's name in the caption."""


@dataclass(frozen=True)
class Split:
    """One tier's devices in one plan."""

    guaranteed: int
    borrowable: int
    tainted: int
    """Tainted devices promised to nobody."""
    free: int
    raw: int

    @staticmethod
    def of(tier: TierCapacity | None) -> Split | None:
        """The split of a tier's capacity, None when the plan has no such tier."""
        if tier is None:
            return None
        spare_tainted = max(0, tier.capacity - tier.guaranteed - tier.borrowable)
        return Split(tier.guaranteed, tier.borrowable, spare_tainted, tier.headroom, tier.capacity)


@dataclass(frozen=True)
class TierRow:
    """One tier of one cluster, before and after (None where it does not exist)."""

    cluster: str
    tier: str
    before: Split | None
    after: Split | None


def capacity_rows(
    previous: Mapping[str, ClusterPlan], plans: Sequence[ClusterPlan]
) -> list[TierRow]:
    """Every tier of every cluster in either side, by cluster then tier."""
    current = {p.cluster: p for p in plans}
    rows = []
    for cluster in sorted(previous.keys() | current.keys()):
        old = {t.tier: t for t in previous[cluster].tiers} if cluster in previous else {}
        new = {t.tier: t for t in current[cluster].tiers} if cluster in current else {}
        for tier in sorted(old.keys() | new.keys()):
            rows.append(TierRow(cluster, tier, Split.of(old.get(tier)), Split.of(new.get(tier))))
    return rows


def _cell(before: int | None, after: int | None) -> str:
    if before == after:
        return str(after)
    return f"{'-' if before is None else before} -> {'-' if after is None else after}"


COLUMNS = ("guaranteed", "borrowable", "tainted", "free", "raw")


def capacity_table(rows: Sequence[TierRow]) -> list[list[str]]:
    """Cells per row: cluster, tier, then each of COLUMNS as `before -> after` (one number
    when it does not move, `-` on the side where the tier does not exist)."""
    return [
        [
            row.cluster,
            row.tier,
            *(
                _cell(
                    getattr(row.before, column) if row.before else None,
                    getattr(row.after, column) if row.after else None,
                )
                for column in COLUMNS
            ),
        ]
        for row in rows
    ]


def _quoted(text: str) -> str:
    """A Mermaid string: between double quotes, which it cannot hold."""
    return '"' + text.replace('"', "'") + '"'


def _stack(split: Split | None) -> list[int]:
    """Running totals from the top segment down: raw, guaranteed + borrowable, guaranteed."""
    if split is None:
        return [0, 0, 0]
    return [
        split.guaranteed + split.borrowable + split.tainted,
        split.guaranteed + split.borrowable,
        split.guaranteed,
    ]


def capacity_chart(cluster: str, rows: Sequence[TierRow]) -> list[str]:
    """The fenced Mermaid block of one cluster: a bar per tier before and after."""
    categories: list[str] = []
    series: list[list[int]] = [[], [], []]
    for row in rows:
        for side, split in (("before", row.before), ("after", row.after)):
            categories.append(_quoted(f"{row.tier} {side}"))
            for values, total in zip(series, _stack(split), strict=True):
                values.append(total)
    top = max((v for values in series for v in values), default=0)
    palette = ",".join(colour for _, colour, _ in reversed(SEGMENTS))
    return [
        "```mermaid",
        '%%{init: {"themeVariables": {"xyChart": {"plotColorPalette": "' + palette + '"}}}}%%',
        "xychart-beta horizontal",
        f"    title {_quoted(f'{cluster}: devices per tier')}",
        f"    x-axis [{', '.join(categories)}]",
        f'    y-axis "devices" 0 --> {max(top, 1)}',
        *(f"    bar [{', '.join(str(v) for v in values)}]" for values in series),
        "```",
    ]


def chart_caption() -> str:
    """What the colours of the charts mean (the charts carry no legend)."""
    parts = [f"{name} {colour_name}" for name, _, colour_name in SEGMENTS]
    return f"Each bar is a tier's raw devices, stacked from the axis: {', '.join(parts)}."
