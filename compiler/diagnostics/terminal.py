"""Text made safe to print on a terminal or in a CI log.

Diagnostics quote what users wrote: a file name, a value, a whole source line. Written as it
is, an escape sequence in a policy file (ESC, CSI, OSC) could clear the screen, retitle the
window or forge lines, and a bidi override (U+202E) could make the quoted text read as
something else. Such characters are written as Python-style escapes instead (`\\x1b`, `\\u202e`),
visible and one-for-one, so a caret under a quoted line can be placed after them.
"""

from __future__ import annotations

import unicodedata

UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Controls (C0, DEL, C1), format characters (bidi overrides and isolates, zero-width
characters), lone surrogates (which could not even be encoded) and line or paragraph separators."""


def visible(text: str) -> str:
    """`text` with every character a terminal could act on, or hide, written as an escape."""
    if text.isprintable():  # the common case, checked in C; nothing printable is unsafe
        return text
    return "".join(_escape(c) if unicodedata.category(c) in UNSAFE_CATEGORIES else c for c in text)


def _escape(character: str) -> str:
    point = ord(character)
    if point < 0x100:
        return f"\\x{point:02x}"
    if point < 0x10000:
        return f"\\u{point:04x}"
    return f"\\U{point:08x}"
