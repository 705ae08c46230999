"""Diagnostic formats: text and github print a line (or a few) per diagnostic as it is
found; json and sarif are documents of the whole run (compiler.diagnostics.document and
.sarif), written once when the command ends.

Text and github output go to terminals and CI logs: every piece of it that can hold user text
(file names, messages, hints, notes, quoted lines) passes through `visible`. The documents
are exact JSON: its own escapes keep control characters out of the stream.
"""

from __future__ import annotations

from collections.abc import Callable

from compiler.diagnostics.codes import CODES
from compiler.diagnostics.diagnostic import Diagnostic, Span
from compiler.diagnostics.excerpt import source_excerpt
from compiler.diagnostics.terminal import visible

FORMATS = ("text", "json", "github", "sarif")
DOCUMENT_FORMATS = ("json", "sarif")
"""The formats that write one document to stdout when the command ends."""


def _excerpt(span: Span) -> list[str]:
    """The source line (a window of it, if long) and a caret under the span's column."""
    column = max(span.column, 1)
    found = source_excerpt(span.file, span.line, column)
    if found is None:
        return []
    before = "…" if found.start > 0 else ""
    after = "…" if found.more else ""
    text = found.text.replace("\t", " ")
    caret = " " * len(before + visible(text[: column - 1 - found.start])) + "^"
    gutter = " " * len(str(span.line))
    return [f" {span.line} | {before}{visible(text)}{after}", f" {gutter} | {caret}"]


def format_text(diagnostic: Diagnostic) -> str:
    """`file:line:col: error[GF401]: message`, the source line with a caret, hints, notes."""
    where = f"{diagnostic.span}: " if diagnostic.span else ""
    head = f"{where}{diagnostic.severity.value}[{diagnostic.code}]: {diagnostic.message}"
    lines = [visible(head)]
    if diagnostic.span:
        lines.extend(_excerpt(diagnostic.span))
    lines.extend(visible(f"  = hint: {hint}") for hint in diagnostic.hints)
    lines.extend(visible(f"  = note: {note} ({span})") for note, span in diagnostic.related)
    return "\n".join(lines)


def _escape_github(text: str) -> str:
    """Text for a workflow command: the line breaks the command's own syntax uses escaped."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_github_property(text: str) -> str:
    return _escape_github(text).replace(":", "%3A").replace(",", "%2C")


def format_github(diagnostic: Diagnostic) -> str:
    """A GitHub Actions workflow command that annotates the file and line in the PR.

    Line and column are given only when the diagnostic has them (a directory such as out/
    has none); property values are escaped as the workflow-command syntax requires.
    """
    command = "error" if diagnostic.severity.value == "error" else "warning"
    span = diagnostic.span
    properties = []
    if span:
        properties.append(f"file={_escape_github_property(visible(span.file))}")
        if span.line > 0:
            properties.append(f"line={span.line}")
            properties.append(f"col={max(span.column, 1)}")
    properties.append(f"title={diagnostic.code} {CODES[diagnostic.code].name}")
    body = visible(diagnostic.message) + "".join(f"\nhint: {visible(h)}" for h in diagnostic.hints)
    body += "".join(f"\nnote: {visible(f'{n} ({w})')}" for n, w in diagnostic.related)
    lines = [f"::{command} {','.join(properties)}::{_escape_github(body)}"]
    for note, where in diagnostic.related:  # annotate every clause involved, not just the first
        related = f"file={_escape_github_property(visible(where.file))}"
        if where.line > 0:
            related += f",line={where.line},col={max(where.column, 1)}"
        title = _escape_github_property(f"{diagnostic.code} (related)")
        lines.append(f"::notice {related},title={title}::{_escape_github(visible(note))}")
    return "\n".join(lines)


LINE_FORMATTERS: dict[str, Callable[[Diagnostic], str]] = {
    "text": format_text,
    "github": format_github,
}
