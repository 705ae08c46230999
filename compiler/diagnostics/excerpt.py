"""The part of a source line a diagnostic points at, read no further than it is needed.

A diagnostic can point into any file: a policy file refused for its size, a file in out/,
CODEOWNERS. The printer therefore reads in small pieces up to the line, stops at READ_LIMIT
bytes, and keeps only a window of the line around the column, so quoting a line costs the
same small memory whatever the size of the file (reading a whole 100 MB file to quote its
first line once took 348 MB).
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from stat import S_ISREG
from typing import BinaryIO

READ_LIMIT = 1 << 20
"""Bytes read at most to quote one line: twice the largest policy file the loader reads; a
line that starts further into a file is named by the diagnostic but not quoted."""

WINDOW = 160
"""Characters of a line shown at most: a longer line is cut around the column."""

_PIECE = 1 << 16

_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
"""Line breaks as YAML counts them, so the loader's line numbers find their lines."""


@dataclass(frozen=True)
class Excerpt:
    """A window of one source line."""

    text: str
    start: int
    """How many characters of the line come before `text`."""
    more: bool
    """Whether the line goes on after `text`."""


def source_excerpt(file: str, line: int, column: int) -> Excerpt | None:
    """The window of line `line` of `file` around `column` (both 1-based); None when the file
    is not a readable regular file or the line does not start within READ_LIMIT bytes."""
    path = Path(file)
    try:
        if line <= 0 or not S_ISREG(path.stat().st_mode):  # a pipe would block the read
            return None
        with path.open("rb") as handle:
            pieces = _pieces(handle)
            first = _after_breaks(pieces, line - 1)
            return None if first is None else _window(chain([first], pieces), column)
    except (OSError, ValueError):  # ValueError: a NUL in the name, or text not UTF-8
        return None


def _pieces(handle: BinaryIO) -> Iterator[str]:
    """The file's first READ_LIMIT bytes as text, in pieces that never end between a CR and
    its LF (so that a CRLF counts once)."""
    decoder = codecs.getincrementaldecoder("utf-8")()  # not UTF-8: not quoted (ValueError)
    held = ""
    for _ in range(READ_LIMIT // _PIECE):
        data = handle.read(_PIECE)
        text = held + decoder.decode(data, final=not data)
        if not data:
            break
        held = "\r" if text.endswith("\r") else ""
        yield text.removesuffix(held)
    else:
        text = held
    if text:
        yield text


def _breaks(text: str) -> int:
    return (
        text.count("\n")
        + text.count("\r")
        - text.count("\r\n")
        + text.count("\x85")
        + text.count("\u2028")
        + text.count("\u2029")
    )


def _after_breaks(pieces: Iterator[str], count: int) -> str | None:
    """The rest of the piece after the `count`-th line break, or None if the text ends first."""
    if count == 0:
        return ""
    for piece in pieces:
        found = _breaks(piece)
        if found < count:
            count -= found
            continue
        for match in _BREAK.finditer(piece):
            count -= 1
            if count == 0:
                return piece[match.end() :]
    return None


def _window(pieces: Iterator[str], column: int) -> Excerpt | None:
    """WINDOW characters of the line that `pieces` starts with: the whole line if it fits,
    else about half of them before `column`. None if the text ends where the line would
    start (the position just past a final line break)."""
    first = max(column - 1 - WINDOW, 0)
    last = first + 2 * WINDOW  # characters [first, last) are kept: enough for any window
    kept: list[str] = []
    seen = 0
    ended = True
    for piece in pieces:
        end = _BREAK.search(piece)
        part = piece[: end.start()] if end else piece
        kept.append(part[max(first - seen, 0) : max(last - seen, 0)])
        seen += len(part)
        if end:
            break
        if seen > last:
            ended = False
            break
    else:
        if seen == 0:
            return None
    low = max(column - 1 - WINDOW // 2, 0)
    if ended:  # the line's length is known: fill the window with as much of it as there is
        low = max(min(low, seen - WINDOW), first)
    low = min(low, seen)
    text = "".join(kept)[low - first : low - first + WINDOW]
    return Excerpt(text, low, seen > low + WINDOW)
