"""The direct YAML writer of small objects (issue 20): any keys and values read back as
written, so a builder cannot be steered by a string the way f-strings could."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.generate import Size, generate
from compiler.emit.manifest import Manifest
from compiler.emit.mig_parted_configmap import mig_parted_config
from compiler.emit.yaml_safe import block
from compiler.emit.yaml_writer import comment, config_map_yaml, document, present, spec_yaml
from tests.compile_imports import imported_by_compile
from tests.conftest import EXAMPLE

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


@given(st.lists(st.text(max_size=30).filter(str.isprintable)))
def test_comment_lines_read_as_nothing(lines: list[str]) -> None:
    text = comment(*lines) + document({"a": "b"})
    assert text.count("\n") == len(lines) + 1
    assert yaml.safe_load(text) == {"a": "b"}


@pytest.mark.parametrize("line", ["a\nkind: Secret", "a\rb", "a\x85b", "a\u2028b", "\x1f"])
def test_a_comment_line_with_a_line_break_or_a_control_character_is_refused(line: str) -> None:
    with pytest.raises(ValueError, match="only printable"):
        comment(line)


@given(st.dictionaries(st.text(max_size=20), st.text(max_size=60), max_size=3))
def test_a_config_maps_texts_read_back_as_written(data: dict[str, str]) -> None:
    manifest = Manifest(kind="ConfigMap", name="c", builder=config_map_yaml, values={"data": data})
    read = yaml.safe_load(config_map_yaml(manifest))
    assert (read["apiVersion"], read["kind"], read["metadata"]["name"]) == ("v1", "ConfigMap", "c")
    assert (read["data"] or {}) == data


ENTRY_VALUES = st.one_of(
    TEXT,
    st.booleans(),
    st.lists(st.one_of(TEXT, st.integers()), max_size=3),
    st.dictionaries(TEXT, st.integers(), min_size=1, max_size=3),
)


@given(st.dictionaries(TEXT, st.lists(st.dictionaries(TEXT, ENTRY_VALUES, min_size=1), min_size=1)))
def test_mig_parted_configurations_read_back_with_flow_lists(
    configs: dict[str, list[dict[str, object]]],
) -> None:
    text = mig_parted_config(configs)
    assert yaml.safe_load(text) == {"version": "v1", "mig-configs": configs or None}
    flows = [line for line in text.splitlines() if line.endswith("]")]
    lists = sum(
        isinstance(v, list) for entries in configs.values() for e in entries for v in e.values()
    )
    assert len(flows) == lists  # every list on one line, in flow style


def test_only_a_fleet_with_argo_cd_files_imports_jinja(tmp_path: Path) -> None:
    """Jinja2 is imported at the first template render, never at start-up, and only Argo
    CD's files have templates: a fleet without them (the benchmarks' fleets) does not import
    it, the example fleet (which has them) does."""
    policies = tmp_path / "policies"
    generate(Size(2, 4, 2, 2, 0.3, 0.0), 1, policies)
    assert imported_by_compile(policies, tmp_path / "out", ("jinja2",)) == set()
    assert imported_by_compile(EXAMPLE, tmp_path / "example-out", ("jinja2",)) == {"jinja2"}


def test_only_the_fields_with_a_value_are_present_and_an_empty_spec_is_an_empty_mapping() -> None:
    """A Cohort with neither parent nor headroom, a ResourceFlavor without node taints: their
    spec is `{}`, not a bare `spec:` (null)."""
    spec = present(parentName=None, resourceGroups=[], description="")
    assert spec == {}
    values = {"api_version": "kueue.x-k8s.io/v1beta2", "spec": spec}
    text = spec_yaml(Manifest(kind="Cohort", name="c", builder=spec_yaml, values=values))
    assert text.endswith("\nspec: {}\n")
    assert yaml.safe_load(text)["spec"] == {}
    assert present(a="x", b=None, c=[1]) == {"a": "x", "c": [1]}
