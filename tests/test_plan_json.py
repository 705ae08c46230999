"""A plan's JSON is the standard library's `json.dumps(indent=2, sort_keys=True)` byte for byte,
whichever encoder writes it (compiler.ir.plan.indented_json): the oracle is json itself."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.ir.plan import indented_json

SCALARS = (
    st.text()  # beyond ASCII and control characters too: json escapes them
    | st.integers()  # beyond 64 bits too: orjson refuses them
    | st.booleans()
    | st.none()
)
DOCUMENTS = st.dictionaries(
    st.text(),
    st.recursive(
        SCALARS,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
        max_leaves=20,
    ),
    max_size=6,
)


@settings(max_examples=400, deadline=None)
@given(DOCUMENTS)
def test_a_document_is_written_as_json_indents_it(document: dict[str, Any]) -> None:
    assert indented_json(document) == json.dumps(document, indent=2, sort_keys=True)


def test_the_cases_orjson_writes_otherwise_are_written_as_json_does() -> None:
    for document in ({"é": "ü"}, {"a": "\u2028"}, {"n": 2**64}, {"n": -(2**63) - 1}, {}):
        assert indented_json(document) == json.dumps(document, indent=2, sort_keys=True)
    assert indented_json({"b": [], "a": {}}) == '{\n  "a": {},\n  "b": []\n}'
