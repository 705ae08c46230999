"""Scalars that end in a line break read back whole (regex `$` matches before a final break,
so `a\\n` once passed as a plain scalar and `a b\\n` went between quotes with a raw break)."""

from __future__ import annotations

import pytest
import yaml

from compiler.emit.yaml_safe import yaml_scalar


@pytest.mark.parametrize("text", ["a\n", "a b\n", "\n", "name\n\n"])
def test_a_final_line_break_is_escaped(text: str) -> None:
    scalar = yaml_scalar(text)
    assert "\n" not in scalar
    assert yaml.safe_load(f"{scalar}: {scalar}\nnext: 1\n") == {text: text, "next": 1}
