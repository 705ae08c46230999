"""The direct YAML writer of small objects (issue 20): any keys and values read back as
written, so a builder cannot be steered by a string the way f-strings could."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from compiler.emit.render import block
from compiler.emit.yaml_writer import document

TEXT = st.text(max_size=30)
SCALARS = st.one_of(TEXT, st.integers(), st.booleans(), st.none())
OBJECTS = st.recursive(
    st.dictionaries(TEXT, SCALARS, min_size=1, max_size=4),
    lambda inner: st.dictionaries(
        TEXT,
        st.one_of(SCALARS, inner, st.lists(st.one_of(SCALARS, inner), min_size=1, max_size=3)),
        min_size=1,
        max_size=4,
    ),
    max_leaves=12,
)


@given(OBJECTS)
def test_any_object_reads_back_as_written(fields: dict[str, Any]) -> None:
    assert yaml.safe_load(document(fields)) == fields


def test_the_layout_is_the_templates() -> None:
    text = document({"spec": {"hard": {"pods": "0"}, "list": [{"a": "x", "b": 1}, "no"]}})
    assert text == ('spec:\n  hard:\n    pods: "0"\n  list:\n    - a: x\n      b: 1\n    - "no"\n')


def test_an_empty_mapping_is_its_bare_key_and_a_block_passes_through() -> None:
    text = document({"labels": {}, "rule": block("a\nb", 2)})
    assert text == "labels:\nrule: |-\n  a\n  b\n"


def test_a_sequence_of_sequences_is_refused() -> None:
    with pytest.raises(TypeError):
        document({"x": [["a"]]})
