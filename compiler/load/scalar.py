"""Where a character of a loaded string scalar was written: for an error inside a value (a CEL
expression's column), so the caret lands on the character and not on the scalar's start.

The loader keeps only each node's start. This module reads the scalar's source again and
rebuilds the value from it (plain and quoted scalars on one line, literal and folded block
scalars); only when the rebuilt value equals the loaded one is the position trusted, else
the scalar's start is returned.
"""

from __future__ import annotations

import os
import stat

from compiler.diagnostics import Span

READ_LIMIT = 1 << 20
"""Policy files are at most 512 KiB (compiler/load/budget.py); anything larger is not read."""

Segment = tuple[int, int, str]
"""A piece of the value as written: source line, column of its first character, its text."""


def position_in_scalar(start: Span, value: str, line: int, column: int) -> Span:
    """The source position of character (`line`, `column`) (1-based) of `value`, the string
    scalar that starts at `start`; `start` itself when the source does not rebuild `value`."""
    lines = value.split("\n")
    if not 1 <= line <= len(lines) or start.line < 1 or start.column < 1:
        return start
    offset = sum(len(text) + 1 for text in lines[: line - 1]) + column - 1
    segments = _segments(start, value)
    if segments is None:
        return start
    for number, first, text in segments:
        if offset <= len(text):  # the separator after a segment stands for its line's end
            return Span(start.file, number, first + offset)
        offset -= len(text) + 1
    number, first, text = segments[-1]  # past the end (a parser at end of input)
    return Span(start.file, number, first + len(text))


def _segments(start: Span, value: str) -> list[Segment] | None:
    source = _source_lines(start.file)
    if source is None or start.line > len(source):
        return None
    head = source[start.line - 1][start.column - 1 :]
    if head[:1] in (">", "|"):
        return _block(source, start, head[0], value)
    if head[:1] in ("'", '"'):
        quote = head[0]
        closing = head.find(quote, 1)
        if closing > 0 and head[1:closing] == value and "\\" not in value and quote not in value:
            return [(start.line, start.column + 1, value)]
        return None
    if head.startswith(value):
        return [(start.line, start.column, value)]
    return None


def _block(source: list[str], start: Span, style: str, value: str) -> list[Segment] | None:
    """Literal (`|`) lines join with newlines; folded (`>`) ones with spaces, where no line is
    empty or more indented (those fold otherwise: not rebuilt)."""
    body: list[tuple[int, str]] = []
    indent: int | None = None
    for number in range(start.line + 1, len(source) + 1):
        text = source[number - 1]
        if not text.strip():
            body.append((number, ""))
            continue
        width = len(text) - len(text.lstrip(" "))
        indent = width if indent is None else indent
        if width < indent:
            break
        body.append((number, text))
    while body and not body[-1][1]:
        body.pop()
    if indent is None or not body:
        return None
    segments = [(number, indent + 1, text[indent:]) for number, text in body]
    if style == ">" and any(not t or t[0] == " " for _, _, t in segments):
        return None
    joined = ("\n" if style == "|" else " ").join(t for _, _, t in segments)
    return segments if joined == value.rstrip("\n") else None


def _source_lines(file: str) -> list[str] | None:
    try:
        status = os.stat(file)
        if not stat.S_ISREG(status.st_mode) or status.st_size > READ_LIMIT:
            return None
        with open(file, encoding="utf-8-sig") as handle:
            return handle.read().splitlines()
    except (OSError, ValueError):
        return None
