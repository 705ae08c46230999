"""The text printer quotes the offending source line: reading only what it prints (memory stays
bounded whatever the file's size), and never passing a control character to the terminal."""

from __future__ import annotations

import json
import tracemalloc
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest

from compiler.diagnostics import CompileError, Diagnostic, Span
from compiler.diagnostics.document import diagnostics_document
from compiler.diagnostics.excerpt import WINDOW
from compiler.diagnostics.formats import format_github, format_text
from compiler.load import load_policies

MiB = 2**20


def peak_of(action: Callable[[], object]) -> tuple[object, float]:
    """What `action` returns, and the peak Python heap (MiB) it took."""
    tracemalloc.start()
    try:
        result = action()
        peak = tracemalloc.get_traced_memory()[1] / MiB
    finally:
        tracemalloc.stop()
    return result, peak


def excerpt(text: str) -> tuple[str, str]:
    """The quoted source line and the caret line of a text diagnostic (gutters removed)."""
    source, caret = text.splitlines()[1:3]
    return source.split(" | ", 1)[1], caret.split(" | ", 1)[1]


def diagnostic_at(file: Path, line: int, column: int = 1, message: str = "m") -> Diagnostic:
    return Diagnostic("GF101", message, Span(str(file), line, column), ("h",))


def test_a_100_megabyte_policy_file_is_reported_in_bounded_memory(tmp_path: Path) -> None:
    # The loader refuses it after 512 KiB; the printer used to read all of it for its excerpt
    # (a 100 MB file took 348 MB).
    big = tmp_path / "policies" / "big.yaml"
    big.parent.mkdir()
    with big.open("wb") as handle:
        handle.write(b"a: ")
        handle.truncate(100 * MiB)

    def report() -> list[str]:
        with pytest.raises(CompileError) as caught:
            load_policies(big.parent)
        return [format_text(d) for d in caught.value.diagnostics]

    printed, peak = peak_of(report)
    assert peak < 4, f"peak {peak:.1f} MiB"
    assert isinstance(printed, list) and len(printed) == 1
    source, caret = excerpt(printed[0])
    assert source.startswith("a: \\x00\\x00") and source.endswith("…")
    assert len(source) < 1000 and caret == "^"  # a window of the line (each NUL shown as 4)


def test_a_line_deep_in_a_large_file_is_found_reading_no_further(tmp_path: Path) -> None:
    lines = tmp_path / "lines.yaml"
    lines.write_bytes(b"".join(b"k%d: v\n" % i for i in range(200_000)))  # about 2.3 MB
    near = diagnostic_at(lines, 40_000, 5)
    printed, peak = peak_of(lambda: format_text(near))
    assert peak < 4, f"peak {peak:.1f} MiB"
    assert excerpt(str(printed)) == ("k39999: v", "    ^")
    far = diagnostic_at(lines, 190_000)  # beyond what the printer reads: named, not quoted
    printed, peak = peak_of(lambda: format_text(far))
    assert peak < 4, f"peak {peak:.1f} MiB"
    assert str(printed).splitlines()[1:] == ["  = hint: h"]


@pytest.mark.parametrize(
    ("content", "line", "expected"),
    [
        ("a: 1\rb: 2\rc: 3\n", 3, "c: 3"),
        ("a: 1\r\nb: 2\r\nc: 3\r\n", 2, "b: 2"),
        ("a: 1\u2028b: 2\u2029c: 3\x85d: 4\n", 4, "d: 4"),
        ("a: 1\n", 2, None),
        ("", 1, None),
    ],
    ids=["cr", "crlf", "unicode-breaks", "past-the-end", "empty"],
)
def test_lines_are_counted_as_yaml_counts_them(
    tmp_path: Path, content: str, line: int, expected: str | None
) -> None:
    policy = tmp_path / "p.yaml"
    policy.write_bytes(content.encode("utf-8"))
    printed = format_text(diagnostic_at(policy, line)).splitlines()
    if expected is None:
        assert printed[1:] == ["  = hint: h"]
    else:
        assert excerpt("\n".join(printed)) == (expected, "^")


def test_line_breaks_split_between_reads_are_counted_once(tmp_path: Path) -> None:
    # \r\n and multi-byte breaks across every read boundary the printer could use
    for pad in range(8):
        policy = tmp_path / f"p{pad}.yaml"
        line = "x" * (65_533 + pad)
        policy.write_bytes(f"{line}\r\n{line}\u2028tail\n".encode())
        assert excerpt(format_text(diagnostic_at(policy, 3)))[0] == "tail"


def test_a_long_line_is_shown_around_the_caret(tmp_path: Path) -> None:
    policy = tmp_path / "long.yaml"
    line = "a: [" + ",".join(str(i) for i in range(70_000)) + "]"
    policy.write_text(line + "\n")
    for column in (1, 300_001, len(line)):
        source, caret = excerpt(format_text(diagnostic_at(policy, 1, column)))
        assert len(source) < 200
        assert source.startswith("…") == (column > 100)
        assert source.endswith("…") == (column < len(line) - 100)
        shown = source.removeprefix("…").removesuffix("…")
        assert shown in line
        assert source[caret.index("^")] == line[column - 1]
        assert caret.index("^") == source.index(shown) + (column - 1 - line.index(shown))


def test_a_line_that_fits_is_shown_whole(tmp_path: Path) -> None:
    policy = tmp_path / "wide.yaml"
    line = "k: " + "".join(chr(ord("a") + i % 26) for i in range(WINDOW - 3))
    policy.write_text(line + "\nnext: 1\n")
    for column in (1, WINDOW // 2, WINDOW):
        source, caret = excerpt(format_text(diagnostic_at(policy, 1, column)))
        assert source == line and caret.index("^") == column - 1


def test_a_file_that_is_not_utf8_is_named_without_an_excerpt(tmp_path: Path) -> None:
    policy = tmp_path / "latin1.yaml"
    policy.write_bytes("a: 1\nb: café\n".encode("latin-1"))
    assert format_text(diagnostic_at(policy, 1)).splitlines()[1:] == ["  = hint: h"]


def test_an_unreadable_or_special_file_is_named_without_an_excerpt(tmp_path: Path) -> None:
    for file in (tmp_path / "missing.yaml", tmp_path):
        printed = format_text(diagnostic_at(file, 1))
        assert printed.splitlines() == [f"{file}:1:1: error[GF101]: m", "  = hint: h"]


def unsafe(text: str) -> list[str]:
    """The characters of printed text that a terminal could act on (line breaks aside)."""
    return [c for c in text if c != "\n" and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")]


CONTROLS = [
    ("\x1b[2J", "\\x1b[2J"),  # ESC, a CSI sequence: clear the screen
    ("\x1b]0;owned\x07", "\\x1b]0;owned\\x07"),  # OSC: set the window title, ended by BEL
    ("\x9b31m", "\\x9b31m"),  # C1 CSI
    ("\x08\x08ok", "\\x08\\x08ok"),  # backspaces
    ("\r", "\\x0d"),  # carriage return
    ("\x00\x7f", "\\x00\\x7f"),
    ("\u202e", "\\u202e"),  # right-to-left override
    ("\u2066\u200f", "\\u2066\\u200f"),  # bidi isolate, right-to-left mark
    ("\u2028", "\\u2028"),  # line separator
]


@pytest.mark.parametrize(("raw", "shown"), CONTROLS, ids=[repr(r) for r, _ in CONTROLS])
def test_control_characters_are_printed_visibly(raw: str, shown: str) -> None:
    diagnostic = Diagnostic(
        "GF202",
        f"unknown tier 'a{raw}b'",
        Span(f"team{raw}.yaml", 1, 1),
        (f"tiers: x{raw}",),
        ((f"note{raw}", Span(f"other{raw}.yaml", 2, 3)),),
    )
    text = format_text(diagnostic)
    assert unsafe(text) == []
    assert f"unknown tier 'a{shown}b'" in text and f"team{shown}.yaml:1:1" in text
    assert f"tiers: x{shown}" in text and f"note{shown} (other{shown}.yaml:2:3)" in text
    github = format_github(diagnostic)
    assert unsafe(github) == []
    assert f"a{shown}b".replace("%", "%25") in github
    document = diagnostics_document([diagnostic], [], strict=False, exit_code=1)
    assert unsafe(document) == []
    assert json.loads(document)["diagnostics"][0]["message"] == f"unknown tier 'a{raw}b'"


def test_escape_sequences_in_a_policy_file_are_quoted_visibly(tmp_path: Path) -> None:
    # libyaml refuses the ESC and points at it; the excerpt used to send the line as it is.
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "team.yaml").write_text("name: ok\nnote: \x1b[2Jwiped\x1b]0;title\x07\n")
    with pytest.raises(CompileError) as caught:
        load_policies(policies)
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.span is not None and diagnostic.span.column == 7
    text = format_text(diagnostic)
    assert unsafe(text) == []
    source, caret = excerpt(text)
    assert source == "note: \\x1b[2Jwiped\\x1b]0;title\\x07"
    assert source[caret.index("^") :].startswith("\\x1b[2J")


def test_the_caret_stays_under_its_character_after_invisible_ones(tmp_path: Path) -> None:
    policy = tmp_path / "tier.yaml"
    policy.write_text("tier: ab\u202ecd\u2066x\ty\n", encoding="utf-8")
    for column, character in ((13, "x"), (15, "y"), (9, "\\")):
        source, caret = excerpt(format_text(diagnostic_at(policy, 1, column)))
        assert source == "tier: ab\\u202ecd\\u2066x y"
        assert source[caret.index("^")] == character


@pytest.mark.parametrize("fmt", ["text", "github", "json", "sarif"])
@pytest.mark.parametrize(
    "content",
    [
        "apiVersion: gpufleet.dev/v1alpha1\nkind: Team\x1b]0;owned\x07\n",  # raw: GF101
        'apiVersion: gpufleet.dev/v1alpha1\nkind: "Team\\e[2J\\u202e"\n',  # escaped: GF105
    ],
    ids=["raw", "escaped"],
)
def test_the_command_line_prints_no_control_character(
    tmp_path: Path, run_cli: Callable[..., tuple[int, str, str]], fmt: str, content: str
) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "bad\x1b[1m.yaml").write_text(content)
    code, out, err = run_cli("check", "--policies", policies, "--format", fmt)
    assert code == 2 and (err if fmt in ("json", "sarif") else out) == ""
    assert unsafe(err) == [] and unsafe(out) == []
    if fmt == "sarif":
        (result,) = json.loads(out)["runs"][0]["results"]
        assert (
            "bad%1B%5B1m.yaml"
            in result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        )
    elif fmt == "json":
        (found,) = json.loads(out)["diagnostics"]
        assert found["location"]["file"].endswith("bad\x1b[1m.yaml")
    else:
        assert "bad\\x1b[1m.yaml" in err
