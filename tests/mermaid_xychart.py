"""A checker for the subset of Mermaid's `xychart-beta` grammar the report relies on.

Transcribed from mermaid-js/mermaid packages/mermaid/src/diagrams/xychart/parser/xychart.jison
(the grammar since Mermaid 10.6.0, the first release with XY charts), for the statements the
report writes, each on its own line:

    %%{init: <JSON>}%%                       a directive (JSON object, double-quoted keys)
    xychart-beta [horizontal|vertical]       XYCHART chartConfig
    title "<text without a quote>"           title text (STR)
    x-axis [STR, STR, ...]                   X_AXIS parseXAxis: xAxisData: bandData
    y-axis "<text>" NUMBER --> NUMBER        Y_AXIS parseYAxis: text yAxisData
    bar [NUMBER, NUMBER, ...]                BAR plotData: commaSeparatedNumbers

where NUMBER is the lexer's NUMBER_WITH_DECIMAL, `[+-]?(?:\\d+(?:\\.\\d+)?|\\.\\d+)`, and a STR is
`"[^"]*"`. Anything else is refused, so a report line outside this subset fails its test.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

NUMBER = r"[+-]?(?:\d+(?:\.\d+)?|\.\d+)"
STRING = r'"[^"\n]*"'
_HEADER = re.compile(r"xychart-beta(?: (horizontal|vertical))?")
_TITLE = re.compile(rf"title ({STRING})")
_X_AXIS = re.compile(rf"x-axis \[({STRING}(?:, ?{STRING})*)\]")
_Y_AXIS = re.compile(rf"y-axis ({STRING}) ({NUMBER}) --> ({NUMBER})")
_BAR = re.compile(rf"bar \[({NUMBER}(?:, ?{NUMBER})*)\]")
_DIRECTIVE = re.compile(r"%%\{init: (.*)\}%%")


@dataclass
class XyChart:
    """What a parsed chart holds."""

    orientation: str = "vertical"
    init: dict[str, object] = field(default_factory=dict)
    title: str = ""
    categories: list[str] = field(default_factory=list)
    y_title: str = ""
    y_range: tuple[float, float] = (0.0, 0.0)
    bars: list[list[float]] = field(default_factory=list)


def parse_xychart(block: str) -> XyChart:
    """Parse a chart's body (between the fences); AssertionError on any line outside the
    subset, or on a chart that is not well formed (bars not one value per category)."""
    chart = XyChart()
    lines = [line.strip() for line in block.splitlines() if line.strip()]
    if lines and (directive := _DIRECTIVE.fullmatch(lines[0])):
        init = json.loads(directive.group(1))
        assert isinstance(init, dict), lines[0]
        chart.init = init
        lines = lines[1:]
    assert lines, "empty chart"
    header = _HEADER.fullmatch(lines[0])
    assert header, f"not an xychart-beta header: {lines[0]!r}"
    chart.orientation = header.group(1) or "vertical"
    for line in lines[1:]:
        if match := _TITLE.fullmatch(line):
            chart.title = match.group(1)[1:-1]
        elif match := _X_AXIS.fullmatch(line):
            chart.categories = [s[1:-1] for s in re.findall(STRING, match.group(1))]
        elif match := _Y_AXIS.fullmatch(line):
            chart.y_title = match.group(1)[1:-1]
            chart.y_range = (float(match.group(2)), float(match.group(3)))
        elif match := _BAR.fullmatch(line):
            chart.bars.append([float(n) for n in re.findall(NUMBER, match.group(1))])
        else:
            raise AssertionError(f"outside the xychart-beta subset: {line!r}")
    assert chart.bars, "a chart without data"
    for bar in chart.bars:
        assert len(bar) == len(chart.categories), (len(bar), len(chart.categories))
        assert all(chart.y_range[0] <= v <= chart.y_range[1] for v in bar), chart.y_range
    return chart


def mermaid_blocks(markdown: str) -> list[str]:
    """The bodies of the ```mermaid fenced blocks of a Markdown text."""
    return re.findall(r"^```mermaid\n(.*?)^```$", markdown, re.MULTILINE | re.DOTALL)
