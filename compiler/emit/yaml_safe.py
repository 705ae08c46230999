"""Render values into YAML text so that no string can change the document's structure."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

_PLAIN = re.compile(r"[A-Za-z_/][A-Za-z0-9_./-]*")
_YAML11_WORDS = frozenset(["y", "yes", "n", "no", "true", "false", "on", "off", "null", "~"])
_QUOTABLE_AS_IS = re.compile(r"[ !#-\[\]-~]*")
"""Printable ASCII but for `"` and `\\`: goes between double quotes unchanged. Both patterns are
used with `fullmatch`: `$` also matches before a final line break, which let "a\n" pass."""
_PRINTABLE_LINES = re.compile(r"^[ -~\n]*$")
_TRAILING_SPACE = re.compile(r" (\n|$)")


def yaml_scalar(value: Any) -> str:
    """A YAML flow scalar for `value`: plain when unambiguous, else a JSON string (valid YAML).

    Plain output is allowed only for strings that every YAML 1.1 and 1.2 reader reads back as
    the same string (no booleans, nulls, numbers, indicators or whitespace).
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        raise TypeError("floats are not emitted; use an int or a quantity string")
    if not isinstance(value, str):
        raise TypeError(f"cannot emit {type(value).__name__} as a YAML scalar")
    return string_scalar(value)


@lru_cache(maxsize=65536)
def string_scalar(value: str) -> str:
    """`yaml_scalar` of a string (remembered: the same names recur in every manifest)."""
    if _PLAIN.fullmatch(value) and value.lower() not in _YAML11_WORDS:
        return value
    return double_quoted(value)


def double_quoted(text: str) -> str:
    """A YAML double-quoted scalar holding exactly `text`, with only printable ASCII inside."""
    if _QUOTABLE_AS_IS.fullmatch(text):
        return f'"{text}"'
    out = ['"']
    for char in text:
        code = ord(char)
        if char in ('"', "\\"):
            out.append("\\" + char)
        elif 0x20 <= code <= 0x7E:
            out.append(char)
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


class Block(str):
    """A literal block scalar already laid out; `finalize` passes it through untouched."""


def finalize(value: Any) -> str:
    """The YAML text of one value: how every template interpolation and every directly
    written scalar (yaml_writer) is quoted, so no string changes a document's structure."""
    if type(value) is str:  # most values: names, keys, quantities (and never a Block)
        return string_scalar(value)
    if isinstance(value, Block):
        return str(value)
    return yaml_scalar(value)


def block(text: str, indent: int, single_line_too: bool = False) -> str:
    """Multi-line text as a literal block at `indent`, or a quoted scalar if it must be.

    `|-` when the text has no final line break, `|` when it has exactly one; anything a
    literal block cannot hold exactly (more final breaks, trailing spaces, tabs, non-ASCII,
    a leading space) is quoted instead. `single_line_too` writes one-line text as a block as
    well (CEL reads better unquoted).
    """
    ends_with_break = text.endswith("\n")
    lines = (text[:-1] if ends_with_break else text).split("\n")
    readable = _PRINTABLE_LINES.match(text) is not None and _TRAILING_SPACE.search(text) is None
    one_line = len(lines) == 1 and not single_line_too
    if one_line or not readable or not lines[0] or lines[0][0] == " " or not lines[-1]:
        return Block(yaml_scalar(text))
    pad = " " * indent
    chomping = "" if ends_with_break else "-"
    return Block(f"|{chomping}\n" + "\n".join(pad + line if line else "" for line in lines))
