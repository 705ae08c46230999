"""YAML hazards: each is refused (or, for merge keys and long lines, handled) with a located
diagnostic, within bounded time and memory, before anything expands or recurses."""

from __future__ import annotations

import math
import os
import signal
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from compiler.diagnostics import CompileError, Diagnostic, Severity
from compiler.load import load_policies
from compiler.load.budget import MAX_DEPTH, MAX_NODES_PER_FILE, check_budget
from compiler.load.loader import MAX_FILE_BYTES, parse_documents
from compiler.pipeline import Compiled, check_policies, compile_policies
from tests.conftest import committed_steering


class Hung(Exception):
    """The block under test ran far past its bound: a hang, stopped rather than waited for."""


def _hung(signum: int, frame: object) -> None:
    raise Hung("still running after the bound")


@contextmanager
def bounded(seconds: float, megabytes: float | None = None) -> Iterator[None]:
    """Fail if the block takes longer than allowed, or, given `megabytes`, if its peak Python
    heap is larger (tracemalloc slows ruamel several times, so it is on only when asked).
    A block still running at five times its bound is stopped (Hung), so a hang fails the test
    instead of stalling the suite."""
    if megabytes is not None:
        tracemalloc.start()
    previous = signal.signal(signal.SIGALRM, _hung)
    signal.setitimer(signal.ITIMER_REAL, 5 * seconds)
    start = time.perf_counter()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        elapsed = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1] / 2**20 if megabytes is not None else 0.0
        tracemalloc.stop()
    assert elapsed < seconds, f"took {elapsed:.2f}s"
    assert megabytes is None or peak < megabytes, f"peak {peak:.1f} MiB"


def refused(text: str) -> Diagnostic:
    """The first diagnostic parsing `text` gives; it must have a position."""
    with pytest.raises(CompileError) as caught:
        parse_documents(text, "f.yaml", "policies/f.yaml")
    first = caught.value.diagnostics[0]
    assert first.span is not None and first.span.line >= 1 and first.span.column >= 1
    return first


FALLBACK = "fallback: {a: b, c:}\n"
"""A first line libyaml refuses and YAML 1.2 reads (a flow mapping key without a value): the
whole text then goes to the fallback parser, ruamel.yaml. It holds six YAML nodes."""


@dataclass(frozen=True)
class Parser:
    """One of the loader's two parse paths: a text's body is read by it after `prefix`."""

    prefix: str
    nodes: int
    """The nodes `prefix` adds to the file (the root mapping's own node excluded)."""
    slowness: float
    """How much longer than libyaml it may take: ruamel.yaml parses in Python (about 30 µs a
    node, a deep flow nesting 0.6 s before the budget stops it), and more slowly still under
    tracemalloc on a loaded machine. Bounds stay far below what a hang takes."""

    def text(self, body: str) -> str:
        return self.prefix + body

    def line(self, body_line: int) -> int:
        """The file's line number of the body's line `body_line`."""
        return body_line + self.prefix.count("\n")


@pytest.fixture(params=["libyaml", "ruamel"])
def parser(request: pytest.FixtureRequest) -> Parser:
    """Each hazard is checked on both parse paths: libyaml's, and ruamel.yaml's for the YAML 1.2
    that libyaml refuses (a bomb there once ran unchecked)."""
    return Parser("", 0, 1.0) if request.param == "libyaml" else Parser(FALLBACK, 6, 3.0)


def test_the_fallback_line_is_read_only_by_ruamel() -> None:
    with pytest.raises(CompileError) as caught:
        check_budget(FALLBACK, "f.yaml")
    assert [d.code for d in caught.value.diagnostics] == ["GF101"]
    (doc,) = parse_documents(FALLBACK + "k: [1]\n", "f.yaml", "p/f.yaml")
    assert doc.data == {"fallback": {"a": "b", "c:": None}, "k": [1]}  # ruamel's reading
    assert doc.span(("k", 0)).line == 2


def billion_laughs(levels: int = 9, width: int = 10) -> str:
    lines = ["a0: &a0 [" + ", ".join(["lol"] * width) + "]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def test_billion_laughs_is_refused_before_anything_expands(parser: Parser) -> None:
    with bounded(seconds=2.0 * parser.slowness, megabytes=5):
        diagnostic = refused(parser.text(billion_laughs()))
    assert diagnostic.code == "GF120"
    assert "aliases expanded" in diagnostic.message
    assert diagnostic.span is not None
    assert diagnostic.span.line == parser.line(4)  # a4 repeats a3's 1111 nodes ten times


def test_merge_key_bomb_is_refused(parser: Parser) -> None:
    lines = ["m0: &m0 {k: v}"]
    lines += [
        f"m{i}: &m{i} {{<<: *m{i - 1}, l: [{', '.join([f'*m{i - 1}'] * 10)}]}}"
        for i in range(1, 12)
    ]
    with bounded(seconds=2.0 * parser.slowness, megabytes=5):
        assert refused(parser.text("\n".join(lines) + "\n")).code == "GF120"


def merge_bomb(levels: int, width: int = 10) -> str:
    """Each level merges the previous one `width` times: the merged mapping stays small, but
    following every merge is `width ** levels` steps."""
    lines = ["m0: &m0 {k0: v}"]
    lines += [
        f"m{i}: &m{i} {{<<: [{', '.join([f'*m{i - 1}'] * width)}], k{i}: v}}"
        for i in range(1, levels)
    ]
    return "\n".join(lines) + "\n"


def test_a_merge_key_bomb_made_of_merges_alone_is_refused(parser: Parser) -> None:
    # On the fallback path this hung: each level took ten times as long as the one before.
    with bounded(seconds=2.0 * parser.slowness):
        diagnostic = refused(parser.text(merge_bomb(levels=12)))
    assert diagnostic.code == "GF120"
    assert "aliases expanded" in diagnostic.message
    assert diagnostic.span is not None
    assert diagnostic.span.line == parser.line(5)  # m4 merges m3's 1111 nodes ten times


def test_merges_within_budget_are_followed(parser: Parser) -> None:
    (doc,) = parse_documents(parser.text(merge_bomb(levels=4)), "f.yaml", "p/f.yaml")
    assert doc.data["m3"] == {"k0": "v", "k1": "v", "k2": "v", "k3": "v"}


def test_a_merge_bomb_in_a_sequence_of_mappings_is_refused(parser: Parser) -> None:
    body = (
        merge_bomb(levels=3)
        + "items:\n"
        + "".join("  - {<<: [" + ", ".join(["*m2"] * 10) + f"], name: i{i}}}\n" for i in range(200))
    )
    with bounded(seconds=2.0 * parser.slowness):
        diagnostic = refused(parser.text(body))
    assert diagnostic.code == "GF120"


def test_nested_anchors_count_every_copy(parser: Parser) -> None:
    # An anchor defined inside an aliased node is repeated with it.
    body = "a: &a {b: &b [x, x, x, x, x, x, x, x, x, x], c: [*b, *b, *b, *b, *b, *b, *b]}\n"
    body += "".join(f"d{i}: [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n" for i in range(20))
    with bounded(seconds=2.0 * parser.slowness):
        diagnostic = refused(parser.text(body))
    assert diagnostic.code == "GF120"
    assert diagnostic.span is not None and diagnostic.span.line == parser.line(12)


def test_a_long_chain_of_anchors_is_refused_by_its_depth(parser: Parser) -> None:
    body = "c0: &c0 x\n" + "".join(f"c{i}: &c{i} [*c{i - 1}]\n" for i in range(1, 200))
    with bounded(seconds=2.0 * parser.slowness):
        diagnostic = refused(parser.text(body))
    assert (diagnostic.code, diagnostic.message) == (
        "GF120",
        f"nesting deeper than {MAX_DEPTH} levels",
    )
    assert diagnostic.span is not None and diagnostic.span.line == parser.line(MAX_DEPTH + 1)


def test_aliases_within_budget_are_expanded(parser: Parser) -> None:
    text = parser.text("a: &x [1, 2]\nb: *x\nc: [*x, *x]\n")
    (doc,) = parse_documents(text, "f.yaml", "p/f.yaml")
    assert {k: doc.data[k] for k in "abc"} == {"a": [1, 2], "b": [1, 2], "c": [[1, 2], [1, 2]]}


@pytest.mark.parametrize(
    "text",
    ["a: &a [*a]\n", "a: &a {b: {c: *a}}\n"],
    ids=["sequence", "mapping"],
)
def test_recursive_alias_is_refused(parser: Parser, text: str) -> None:
    # ruamel would read these as [None] and {b: {c: None}}: silently wrong data.
    diagnostic = refused(parser.text(text))
    assert (diagnostic.code, diagnostic.message) == (
        "GF103",
        "alias *a refers to a node that contains it",
    )


def test_anchor_defined_twice_is_refused(parser: Parser) -> None:
    diagnostic = refused(parser.text("a: &x 1\nb: &x 2\nc: *x\n"))
    assert diagnostic.code == "GF103"
    assert diagnostic.span is not None
    assert (diagnostic.span.line, diagnostic.span.column) == (parser.line(2), 4)


@pytest.mark.parametrize("opener", ["[", "{a: ", "- "], ids=["flow-seq", "flow-map", "block"])
@pytest.mark.parametrize("depth", [MAX_DEPTH + 2, 10_000, 1_000_000])
def test_deep_nesting_is_refused_without_recursing(parser: Parser, opener: str, depth: int) -> None:
    text = (
        "a: " + opener * depth
        if opener != "- "
        else "a:\n" + "".join(" " * (2 * i + 2) + "-\n" for i in range(min(depth, 3000)))
    )
    text = parser.text(text)[:MAX_FILE_BYTES]  # the loader refuses larger files unread
    with bounded(seconds=2.0 * parser.slowness, megabytes=10):
        diagnostic = refused(text)
    assert diagnostic.code == "GF120"
    assert diagnostic.message == f"nesting deeper than {MAX_DEPTH} levels"


def test_nesting_up_to_the_limit_loads() -> None:
    (doc,) = parse_documents("[" * MAX_DEPTH + "]" * MAX_DEPTH, "f.yaml", "p/f.yaml")
    depth, node = 0, doc.data
    while node:
        node, depth = node[0], depth + 1
    assert depth == MAX_DEPTH - 1


def test_an_alias_counts_its_depth_where_it_is_used(parser: Parser) -> None:
    deep = "[" * 40 + "]" * 40
    text = f"a: &d {deep}\nb: [[[[[[[[[[[[[[[[[[[[[[[[[*d]]]]]]]]]]]]]]]]]]]]]]]]]\n"
    assert refused(parser.text(text)).code == "GF120"


def test_node_budget_without_aliases(parser: Parser) -> None:
    text = "".join(f"k{i}: {i}\n" for i in range(MAX_NODES_PER_FILE // 2 + 1))
    with bounded(seconds=2.0 * parser.slowness):
        diagnostic = refused(parser.text(text))
    assert diagnostic.code == "GF120"
    assert diagnostic.span is not None
    assert diagnostic.span.line == parser.line(MAX_NODES_PER_FILE // 2 - parser.nodes // 2)


def test_a_100_megabyte_file_is_refused_without_being_read(tmp_path: Path) -> None:
    big = tmp_path / "policies" / "big.yaml"
    big.parent.mkdir()
    with big.open("wb") as handle:
        handle.write(b"a: ")
        handle.truncate(100 * 2**20)
    limit = 2 * MAX_FILE_BYTES / 2**20 + 1
    with bounded(seconds=2.0, megabytes=limit), pytest.raises(CompileError) as caught:
        load_policies(big.parent)
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.code == "GF120"
    assert diagnostic.span is not None and diagnostic.span.line == 1
    assert "larger than" in diagnostic.message


def test_a_very_long_line_is_handled_in_bounded_time(parser: Parser) -> None:
    text = parser.text("description: " + "x" * (MAX_FILE_BYTES - 100) + "\n")
    # about 0.01 s (libyaml) or 0.4 s (ruamel); the slack is for a loaded CI machine
    with bounded(seconds=8.0 * parser.slowness):
        (doc,) = parse_documents(text, "f.yaml", "p/f.yaml")
    assert len(doc.data["description"]) == MAX_FILE_BYTES - 100


def test_a_very_long_flow_line_hits_the_node_budget_fast(parser: Parser) -> None:
    text = parser.text("a: [" + ",".join(["1"] * (MAX_FILE_BYTES // 2 - 10)) + "]\n")
    with bounded(seconds=2.0 * parser.slowness, megabytes=10):
        assert refused(text).code == "GF120"


@pytest.mark.parametrize(
    "text",
    [
        "a: !!python/object/apply:os.system ['true']\n",
        "a: !!python/name:os.system\n",
        "a: !!binary aGVsbG8=\n",
        "a: !!set {x, y}\n",
        "a: !!omap [{x: 1}]\n",
        "a: !custom x\n",
        "a: !custom {x: 1}\n",
        "%TAG !e! tag:example.com,2000:\n---\na: !e!thing x\n",
    ],
)
def test_tags_beyond_plain_yaml_are_refused(parser: Parser, text: str) -> None:
    if text.startswith("%") and parser.prefix:  # a directive must open the file
        text = text.replace("---\n", "---\n" + parser.prefix)
    else:
        text = parser.text(text)
    diagnostic = refused(text)
    assert diagnostic.code == "GF103"
    assert "is not allowed" in diagnostic.message


def test_core_tags_are_allowed() -> None:
    (doc,) = parse_documents("a: !!str 12\nb: !!int '7'\n", "f.yaml", "p/f.yaml")
    assert doc.data == {"a": "12", "b": 7}


PLAIN_SCALARS = {
    # YAML 1.1 reads these as booleans, a timestamp, a sexagesimal and a merge key; 1.2 as text
    "yes": "yes",
    "on": "on",
    "No": "No",
    "2024-01-01": "2024-01-01",
    "1:30": "1:30",
    "<<": "<<",
    # YAML 1.2's core schema
    "0o17": 15,
    "0x1F": 31,
    "-12": -12,
    "1.5e3": 1500.0,
    ".inf": math.inf,
    "True": True,
    "FALSE": False,
    "~": None,
    "null": None,
    "": None,
}


def test_plain_scalars_are_read_under_yaml_1_2(parser: Parser) -> None:
    """Both parse paths resolve untagged scalars by YAML 1.2's core schema, whatever libyaml's
    YAML 1.1 resolver would make of them; quoted ones are always text."""
    keys = [f"k{i}" for i in range(len(PLAIN_SCALARS))]
    body = "".join(f"{k}: {v}\n" for k, v in zip(keys, PLAIN_SCALARS, strict=True))
    quoted = "".join(f"q{k}: '{v}'\n" for k, v in zip(keys, PLAIN_SCALARS, strict=True))
    (doc,) = parse_documents(parser.text(body + quoted), "f.yaml", "p/f.yaml")
    for key, (text, value) in zip(keys, PLAIN_SCALARS.items(), strict=True):
        assert doc.data[key] == value and type(doc.data[key]) is type(value), text
        assert doc.data[f"q{key}"] == text


@pytest.mark.parametrize("text", ["a: !!bool yes\n", "a: !!bool 1\n", "a: !!int 1.5\n"])
def test_an_explicit_tag_the_value_does_not_fit_is_refused(parser: Parser, text: str) -> None:
    """An explicit core tag is taken at its word, on both paths: `!!bool yes` is no boolean
    (it was once read as the text `yes`, and `!!bool 1` as false)."""
    diagnostic = refused(parser.text(text))
    assert diagnostic.code == "GF107" and "cannot read" in diagnostic.message
    assert diagnostic.span is not None and diagnostic.span.line == parser.line(1)


def test_duplicate_keys_are_refused_even_in_flow_style(parser: Parser) -> None:
    diagnostic = refused(parser.text("a: {x: 1, x: 2}\n"))
    assert diagnostic.code == "GF102"


def test_merge_keys_work_as_yaml_merge() -> None:
    text = (
        "defaults: &pool {nodes: 2, gpu: L40S, cpu: 64}\n"
        "pools:\n"
        "  - <<: *pool\n"
        "    name: a\n"
        "  - <<: *pool\n"
        "    name: b\n"
        "    nodes: 4\n"
    )
    (doc,) = parse_documents(text, "f.yaml", "p/f.yaml")
    assert doc.data["pools"] == [
        {"name": "a", "nodes": 2, "gpu": "L40S", "cpu": 64},
        {"name": "b", "nodes": 4, "gpu": "L40S", "cpu": 64},
    ]
    assert doc.span(("pools", 1, "nodes")).line == 7  # a key of its own keeps its line


@pytest.mark.parametrize(
    "text", ["a: {<<: 1}\n", "a: {<<: [1, 2]}\n", "a: {<<: {x: 1}, <<: {y: 2}}\n"]
)
def test_malformed_merge_keys_are_diagnostics(text: str) -> None:
    assert refused(text).code in ("GF101", "GF102")


def test_merge_keys_compile_to_the_same_output(
    compiled_example: Compiled, policy_copy: Path
) -> None:
    cluster = policy_copy / "clusters" / "prod-west.yaml"
    text = cluster.read_text()
    pools = text.index("  nodePools:\n")
    cluster.write_text(
        text[:pools]
        + "  nodePools:\n"
        + "    - &eight {name: b200, nodes: 12, gpu: B200, gpusPerNode: 8, hostMemory: 3Ti,\n"
        + "       cpu: 256}\n"
        + "    - {<<: *eight, name: a100, nodes: 8, gpu: A100-80GB, hostMemory: 1Ti, cpu: 128,\n"
        + "       mig: allowed}\n"
        + "    - {<<: *eight, name: l40s, nodes: 6, gpu: L40S, gpusPerNode: 4,\n"
        + "       hostMemory: 512Gi, cpu: 64, topology: {numaNode: 2, pcieRoot: 2},\n"
        + "       nodeNames: [sjc2-r14-l40s-01, sjc2-r14-l40s-02, sjc2-r14-l40s-03,\n"
        + "                   sjc2-r15-l40s-01, sjc2-r15-l40s-02, sjc2-r15-l40s-04]}\n"
    )
    assert (
        compile_policies(policy_copy, previous=committed_steering()).tree == compiled_example.tree
    )


@pytest.mark.parametrize(
    ("text", "position"),
    [
        ("a: 1\nb: x\x00y\n", (2, 5)),
        ("a: é\x07\n", (1, 5)),
        ("a: x\x7f\n", (1, 5)),
    ],
)
def test_control_characters_are_located(text: str, position: tuple[int, int]) -> None:
    diagnostic = refused(text)
    assert diagnostic.code == "GF101"
    assert diagnostic.span is not None
    assert (diagnostic.span.line, diagnostic.span.column) == position


@pytest.mark.parametrize(
    "text",
    [
        "a: " + "9" * 5000 + "\n",
        "a: 0x" + "f" * 5000 + "\n",
        "a: 9223372036854775808\n",
        "0x" + "f" * 400 + ": 1\n",
    ],
    ids=["5000-digits", "huge-hex", "2**63", "huge-key"],
)
def test_unreadable_scalars_are_located_value_errors(text: str) -> None:
    diagnostic = refused(text)
    assert diagnostic.code == "GF107"


def test_dates_are_strings_under_yaml_12() -> None:
    # YAML 1.2's core schema has no timestamps: an impossible date is just text.
    (doc,) = parse_documents("a: 2001-13-45\nb: 2001-02-30\n", "f.yaml", "p/f.yaml")
    assert doc.data == {"a": "2001-13-45", "b": "2001-02-30"}


def test_lone_surrogate_escape_is_refused() -> None:
    assert refused('a: "\\ud800"\n').code == "GF101"


def test_non_utf8_bytes_are_reported_at_the_file(tmp_path: Path) -> None:
    (tmp_path / "latin1.yaml").write_bytes("a: café\n".encode("latin-1"))
    with pytest.raises(CompileError) as caught:
        load_policies(tmp_path)
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.code == "GF109" and "not UTF-8" in diagnostic.message


@pytest.mark.parametrize(
    "content", [b"", b"\n\n", b"# nothing\n", b"---\n...\n", b"# a\n---\n# b\n---\n", b"~\n"]
)
def test_an_empty_file_is_skipped_with_a_warning(tmp_path: Path, content: bytes) -> None:
    (tmp_path / "empty.yaml").write_bytes(content)
    (tmp_path / "real.yaml").write_text("a: 1\n")
    warnings: list[Diagnostic] = []
    assert [d.data for d in load_policies(tmp_path, warnings)] == [{"a": 1}]
    (warning,) = warnings
    assert (warning.code, warning.severity) == ("GF111", Severity.WARNING)
    assert warning.span is not None and warning.span.file.endswith("empty.yaml")
    assert (warning.span.line, warning.span.column) == (1, 1)
    assert warning.hints


def test_a_file_with_one_real_document_beside_empty_ones_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "real.yaml").write_text("---\n# first\n---\na: 1\n---\n")
    warnings: list[Diagnostic] = []
    assert [d.data for d in load_policies(tmp_path, warnings)] == [{"a": 1}]
    assert warnings == []


def test_an_empty_policy_file_is_an_ordinary_warning_a_suppression_silences(
    policy_copy: Path,
) -> None:
    (policy_copy / "teams" / "forgotten.yaml").write_text("# to be written\n---\n")
    fleet, _ = check_policies(policy_copy)
    (empty,) = [w for w in fleet.warnings if w.code == "GF111"]
    assert empty.span is not None and empty.span.file.endswith("teams/forgotten.yaml")
    fleet_yaml = policy_copy / "fleet.yaml"
    fleet_yaml.write_text(
        fleet_yaml.read_text().replace(
            "  denyUnownedClaims: true\n",
            "  denyUnownedClaims: true\n"
            "  suppressions: [{code: GF111, reason: the team writes it next week}]\n",
        )
    )
    fleet, _ = check_policies(policy_copy)
    assert "GF111" not in [w.code for w in fleet.warnings]
    assert [f.code for s in fleet.suppressions for f in s.findings] == ["GF111"]


def test_policy_symlink_to_outside_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("token: hunter2\n")
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "team.yaml").symlink_to(secret)
    (policies / "inside.yaml").write_text("a: 1\n")
    (policies / "alias.yaml").symlink_to(policies / "inside.yaml")
    with pytest.raises(CompileError) as caught:
        load_policies(policies)
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.code == "GF122"
    assert "hunter2" not in diagnostic.message


def test_a_file_name_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    # The name would land in every object's source annotation as a lone surrogate.
    (tmp_path / os.fsdecode(b"vis\xffion.yaml")).write_text("a: 1\n")
    with pytest.raises(CompileError) as caught:
        load_policies(tmp_path)
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.code == "GF109" and "file name" in diagnostic.message
    assert diagnostic.span is not None and diagnostic.span.line == 1


@pytest.mark.parametrize("text", ["!!str foo\n", "--- !!str\n", "!!int 3\n"])
def test_a_tagged_scalar_document_is_located(text: str) -> None:
    # Found by the fuzzer: ruamel gives a tagged root scalar a position without a line,
    # which was an internal error (GF001).
    (doc,) = parse_documents(text, "f.yaml", "p/f.yaml")
    assert doc.span().line == 1 and doc.span().column >= 1


@pytest.mark.parametrize(
    ("text", "position"),
    [
        ("? {a: [1]}\n: x\n", (1, 3)),
        ("a: {b: 1, [1]: 2}\n", (1, 11)),
        ("x: &s [1]\n? *s\n: 1\n", (2, 3)),
    ],
)
def test_collection_keys_are_located_value_errors(
    parser: Parser, text: str, position: tuple[int, int]
) -> None:
    # Found by the fuzzer: ruamel cannot hash a key holding a collection (GF001 TypeError).
    diagnostic = refused(parser.text(text))
    assert diagnostic.code == "GF107"
    assert diagnostic.span is not None
    assert (diagnostic.span.line, diagnostic.span.column) == (parser.line(position[0]), position[1])


@pytest.mark.parametrize(
    "text",
    ["%YAML 1.3\n---\na: 1\n", "%YAML 2.0\n---\na: 1\n", "%YAML 1.9\n--- {a: http://x}\n"],
    ids=["1.3", "2.0", "1.9-with-a-url"],
)
def test_a_yaml_version_beyond_1_2_is_a_located_error(text: str) -> None:
    # libyaml refuses the directive, and ruamel.yaml's fallback used to raise AssertionError
    # (an internal error, exit 3); found by the long fuzz profile.
    diagnostic = refused(text)
    assert (diagnostic.code, diagnostic.span.line) == ("GF101", 1)
    assert "%YAML 1.2" in " ".join(diagnostic.hints)


@pytest.mark.parametrize("text", ["%YAML 1.2\n---\na: 1\n", "%YAML 1.1\n---\na: 1\n"])
def test_yaml_versions_1_1_and_1_2_are_read(text: str) -> None:
    (doc,) = parse_documents(text, "f.yaml", "p/f.yaml")
    assert doc.data == {"a": 1}
