"""Run the CLI in process on a policy tree and check the contract every run must keep."""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from compiler.cli import main
from compiler.diagnostics import CODES
from tests.fuzz.seeds import PolicyTree, write_tree

SCRATCH = Path("/dev/shm") if Path("/dev/shm").is_dir() else None
"""tmpfs when there is one: the compile fsyncs every file it writes."""


@dataclass(frozen=True)
class Outcome:
    """What one run did: exit code, its diagnostics (parsed JSON lines) and stdout."""

    code: int
    diagnostics: list[dict[str, object]]
    stdout: str
    emitted: dict[str, str]


def run_compile(tree: PolicyTree) -> Outcome:
    """`gpufleet compile --format json` on the tree, into a fresh out/; never raises."""
    with tempfile.TemporaryDirectory(dir=SCRATCH) as scratch:
        root = Path(scratch)
        write_tree(root / "policies", tree)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(
                    [
                        "compile",
                        "--policies",
                        str(root / "policies"),
                        "--out",
                        str(root / "out"),
                        "--format",
                        "json",
                    ]
                )
            except SystemExit as exit_:  # argparse only; a policy never gets here
                code = 100 + int(exit_.code or 0)
        emitted = {
            p.relative_to(root / "out").as_posix(): p.read_text(encoding="utf-8")
            for p in sorted((root / "out").rglob("*"))
            if p.is_file()
        }
        lines = [line for line in err.getvalue().splitlines() if line.strip()]
        diagnostics = [_parse(line) for line in lines]
        return Outcome(code, diagnostics, out.getvalue(), emitted)


def _parse(line: str) -> dict[str, object]:
    try:
        parsed = json.loads(line)
    except json.JSONDecodeError:
        raise AssertionError(f"stderr line is not a JSON diagnostic: {line!r}") from None
    assert isinstance(parsed, dict), line
    return parsed


def check_contract(outcome: Outcome) -> None:
    """Exit 0, 1 or 2; every diagnostic has a registered code and a file:line:column;
    a failing run says why; a successful one emits YAML that parses."""
    assert outcome.code in (0, 1, 2), (outcome.code, outcome.diagnostics)
    for diagnostic in outcome.diagnostics:
        code = diagnostic.get("code")
        assert code in CODES, diagnostic
        assert code not in ("GF001", "GF002"), diagnostic
        assert isinstance(diagnostic.get("file"), str) and diagnostic["file"], diagnostic
        line, column = diagnostic.get("line"), diagnostic.get("column")
        assert isinstance(line, int) and line >= 1, diagnostic
        assert isinstance(column, int) and column >= 1, diagnostic
        assert isinstance(diagnostic.get("message"), str) and diagnostic["message"], diagnostic
    errors = [d for d in outcome.diagnostics if d.get("severity") == "error"]
    if outcome.code == 0:
        assert not errors, errors
        assert outcome.stdout.startswith("compiled "), outcome.stdout
        assert outcome.emitted, "a successful compile wrote nothing"
        for path, text in outcome.emitted.items():
            if path.endswith(".yaml"):
                for document in yaml.safe_load_all(text):
                    assert isinstance(document, dict), (path, text)
    else:
        assert errors, f"exit {outcome.code} without an error diagnostic"
        worst = max(CODES[str(d["code"])].exit_code for d in errors)
        assert worst == outcome.code, (worst, outcome.code, errors)
        assert not outcome.emitted, "a failed compile wrote out/"
