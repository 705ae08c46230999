"""Read the diagnostic docs (docs/diagnostics/GFxxx.md) and run their PASS/FAIL examples.

An example is a section (`## FAIL` or `## PASS`) of fenced blocks taken in order: a block whose
info string carries `file=PATH` writes that file (over the base fleet of README.md; an extra
`encoding=NAME` writes it in that encoding), and a `console` block runs each `$ gpufleet ...`
line in process and expects the lines after it (stderr, then stdout; a line `...` stands for
any number of lines). Examples run in an empty directory, so paths print relative to it.
Set GPUFLEET_UPDATE_DOCS=1 to rewrite the console blocks with what the commands print.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from compiler.cli import main

DOCS = Path(__file__).resolve().parent.parent / "docs" / "diagnostics"
_FENCE = re.compile(r"^(`{3,})([^`\n]*)\n(.*?)^\1[ \t]*$", re.MULTILINE | re.DOTALL)
"""A fenced block closed by a fence as long as its opening one (CommonMark): a console block
whose output holds a fenced block itself (the report's Mermaid charts) opens with more."""
_SECTION = re.compile(r"^## (FAIL|PASS)\b.*$", re.MULTILINE)


@dataclass(frozen=True)
class Block:
    """One fenced block: a file to write, or a console session to run."""

    info: str
    body: str
    start: int
    end: int

    @property
    def file(self) -> str | None:
        """The path the block writes, when it is a file block."""
        found = re.search(r"\bfile=(\S+)", self.info)
        return found.group(1) if found else None

    @property
    def encoding(self) -> str:
        """The encoding to write the file in (default UTF-8)."""
        found = re.search(r"\bencoding=(\S+)", self.info)
        return found.group(1) if found else "utf-8"

    @property
    def is_console(self) -> bool:
        """Whether the block is a console session."""
        return self.info.strip() == "console"


@dataclass
class Example:
    """A FAIL or PASS example of one code page."""

    kind: str
    blocks: list[Block] = field(default_factory=list)


@dataclass
class Page:
    """One docs/diagnostics page."""

    path: Path
    text: str
    examples: list[Example]

    @property
    def code(self) -> str:
        """The code the page documents (its file name)."""
        return self.path.stem


def blocks(text: str) -> list[Block]:
    """Every fenced block of a Markdown text, in order."""
    return [Block(m.group(2), m.group(3), m.start(), m.end()) for m in _FENCE.finditer(text)]


def read_page(path: Path) -> Page:
    """A page with its FAIL and PASS examples."""
    text = path.read_text(encoding="utf-8")
    sections = list(_SECTION.finditer(text))
    examples = []
    for index, section in enumerate(sections):
        end = sections[index + 1].start() if index + 1 < len(sections) else len(text)
        inner = [b for b in blocks(text) if section.end() <= b.start < end]
        examples.append(Example(section.group(1), inner))
    return Page(path, text, examples)


def base_files() -> dict[str, str]:
    """The base fleet every example starts from (the file blocks of README.md)."""
    return {b.file: b.body for b in blocks((DOCS / "README.md").read_text()) if b.file}


@dataclass(frozen=True)
class Run:
    """One command of a console block and what it did."""

    command: str
    expected: list[str]
    exit_code: int
    output: list[str]


def run_command(command: str) -> tuple[int, list[str]]:
    """Run `gpufleet ARGS` in process; exit code and stderr-then-stdout lines."""
    words = shlex.split(command)
    assert words[0] == "gpufleet", command
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(words[1:])
        except SystemExit as exit_:
            code = int(exit_.code or 0)
    return code, (err.getvalue() + out.getvalue()).splitlines()


def console_commands(block: Block) -> list[tuple[str, list[str]]]:
    """The `$ ` commands of a console block, each with the lines expected after it."""
    commands: list[tuple[str, list[str]]] = []
    for line in block.body.splitlines():
        if line.startswith("$ "):
            commands.append((line[2:], []))
        else:
            assert commands, f"console block must start with `$ `: {line!r}"
            commands[-1][1].append(line)
    return commands


def run_example(example: Example, workdir: Path) -> list[tuple[Block, list[Run]]]:
    """Write the base fleet, then each block in order; the runs of every console block."""
    for path, text in base_files().items():
        (workdir / path).parent.mkdir(parents=True, exist_ok=True)
        (workdir / path).write_text(text, encoding="utf-8")
    sessions = []
    for block in example.blocks:
        if block.file:
            target = workdir / block.file
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(block.body.encode(block.encoding))
        elif block.is_console:
            runs = []
            for command, expected in console_commands(block):
                code, output = run_command(command)
                runs.append(Run(command, expected, code, output))
            sessions.append((block, runs))
    return sessions


def matches(expected: list[str], actual: list[str]) -> bool:
    """Whether `actual` lines match `expected`, where a `...` line matches any lines."""
    if not expected:
        return not actual
    if expected[0] == "...":
        return any(matches(expected[1:], actual[i:]) for i in range(len(actual) + 1))
    return bool(actual) and expected[0] == actual[0] and matches(expected[1:], actual[1:])


def updated_page(page: Page, sessions: list[tuple[Block, list[Run]]]) -> str:
    """The page text with its console blocks rewritten to the actual output."""
    text = page.text
    for block, runs in sorted(sessions, key=lambda s: -s[0].start):
        body = "".join(
            f"$ {r.command}\n"
            + "".join(
                f"{line}\n" for line in (r.expected if matches(r.expected, r.output) else r.output)
            )
            for r in runs
        )
        fence = "`" * max(3, 1 + max((len(run) for run in re.findall("`+", body)), default=0))
        text = text[: block.start] + f"{fence}console\n{body}{fence}" + text[block.end :]
    return text


Runner = Callable[[Example], list[tuple[Block, list[Run]]]]


def index_rows() -> list[str]:
    """The README's table of codes, one row per registered code, linking each page."""
    from compiler.diagnostics import CODES

    return [
        f"| [{c.code}]({c.code}.md) | {c.name} | {c.severity.value} | {c.exit_code} | {c.summary} |"
        for c in CODES.values()
    ]
