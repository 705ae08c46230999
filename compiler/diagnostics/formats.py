"""Diagnostic formatters: pure functions from a diagnostic to text (text, json, github)."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from stat import S_ISREG

from compiler.diagnostics.codes import CODES
from compiler.diagnostics.diagnostic import Diagnostic, Span

FORMATS = ("text", "json", "github")


@lru_cache(maxsize=256)
def _cached_lines(path: Path, _version: tuple[int, int]) -> tuple[str, ...]:
    try:
        return tuple(path.read_text(encoding="utf-8").splitlines())
    except (OSError, UnicodeDecodeError):
        return ()


def _source_lines(file: str) -> tuple[str, ...]:
    """The lines of a file, cached per absolute path and version (mtime, size)."""
    path = Path(file).absolute()
    try:
        stat = path.stat()
    except OSError:
        return ()
    if not S_ISREG(stat.st_mode):  # a pipe would block the read forever
        return ()
    return _cached_lines(path, (stat.st_mtime_ns, stat.st_size))


def _excerpt(span: Span) -> list[str]:
    if span.line <= 0:
        return []
    lines = _source_lines(span.file)
    if not 0 < span.line <= len(lines):
        return []
    gutter = len(str(span.line))
    text = lines[span.line - 1].replace("\t", " ")
    caret = " " * max(span.column - 1, 0) + "^"
    return [f" {span.line} | {text}", f" {' ' * gutter} | {caret}"]


def format_text(diagnostic: Diagnostic) -> str:
    """`file:line:col: error[GF401]: message`, the source line with a caret, hints, notes."""
    where = f"{diagnostic.span}: " if diagnostic.span else ""
    lines = [f"{where}{diagnostic.severity.value}[{diagnostic.code}]: {diagnostic.message}"]
    if diagnostic.span:
        lines.extend(_excerpt(diagnostic.span))
    lines.extend(f"  = hint: {hint}" for hint in diagnostic.hints)
    lines.extend(f"  = note: {note} ({span})" for note, span in diagnostic.related)
    return "\n".join(lines)


def format_json(diagnostic: Diagnostic) -> str:
    """One JSON object per line."""
    span = diagnostic.span
    return json.dumps(
        {
            "code": diagnostic.code,
            "name": CODES[diagnostic.code].name,
            "severity": diagnostic.severity.value,
            "message": diagnostic.message,
            "file": span.file if span else None,
            "line": span.line if span else None,
            "column": span.column if span else None,
            "hints": list(diagnostic.hints),
            "related": [
                {"message": m, "file": s.file, "line": s.line, "column": s.column}
                for m, s in diagnostic.related
            ],
        },
        sort_keys=True,
    )


def _escape_github(text: str) -> str:
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
        properties.append(f"file={_escape_github_property(span.file)}")
        if span.line > 0:
            properties.append(f"line={span.line}")
            properties.append(f"col={max(span.column, 1)}")
    properties.append(f"title={diagnostic.code} {CODES[diagnostic.code].name}")
    body = diagnostic.message + "".join(f"\nhint: {h}" for h in diagnostic.hints)
    body += "".join(f"\nnote: {note} ({where})" for note, where in diagnostic.related)
    lines = [f"::{command} {','.join(properties)}::{_escape_github(body)}"]
    for note, where in diagnostic.related:  # annotate every clause involved, not just the first
        related = f"file={_escape_github_property(where.file)}"
        if where.line > 0:
            related += f",line={where.line},col={max(where.column, 1)}"
        title = _escape_github_property(f"{diagnostic.code} (related)")
        lines.append(f"::notice {related},title={title}::{_escape_github(note)}")
    return "\n".join(lines)


FORMATTERS: dict[str, Callable[[Diagnostic], str]] = {
    "text": format_text,
    "json": format_json,
    "github": format_github,
}
