"""Every registered code has a page in docs/diagnostics/ whose FAIL example produces it and
whose PASS example does not, run through the real command line with the exact output shown."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from compiler.diagnostics import CODES, Severity
from tests.diagnostic_docs import DOCS, index_rows, matches, read_page, run_example, updated_page

UPDATE = os.environ.get("GPUFLEET_UPDATE_DOCS") == "1"

WITHOUT_EXAMPLES = {
    "GF001": "an internal error: no policy produces it on purpose",
    "GF701": "only fleets far larger than an example reach the CEL cost limits",
    "GF505": "a gpufleet bug by definition: the tests check every emitted object",
    "GF121": "needs a symlink in out/, which a page cannot create: tests/test_output_paths.py",
    "GF122": "needs a symlink in policies/, which a page cannot create: tests/test_output_paths.py",
    "GF506": "needs another gpufleet holding the lock on out/: tests/test_output_lock.py",
}
"""Codes whose pages explain why they have no FAIL/PASS example."""

NO_EMITTER: set[str] = set()
"""Registered codes that no stage emits yet, so no example can produce them; the test below
fails as soon as one is emitted, so that it gets its page."""

NOT_IN_A_POLICY_FILE = {
    "GF001",
    "GF505",
    "GF701",
    "GF110",
    "GF113",
    "GF501",
    "GF502",
    "GF503",
    "GF504",
    "GF506",
    "GF828",
}
"""Codes about the command line, a directory or out/: every other one names file:line:col."""

IN_A_DUMP = {
    *("GF801", "GF802", "GF803", "GF810", "GF811", "GF812", "GF813", "GF814"),
    *("GF821", "GF822", "GF823", "GF824", "GF825", "GF826"),
}
"""Codes about a cluster dump (`inventory import --dump dump.yaml`): they name its
dump.yaml:line:col rather than a policy file's."""

COMPILER = DOCS.parent.parent / "compiler"


def test_every_registered_code_has_a_page_and_no_page_is_stale() -> None:
    pages = {p.stem for p in DOCS.glob("GF*.md")}
    assert pages == set(CODES) - NO_EMITTER, sorted(pages ^ (set(CODES) - NO_EMITTER))
    for code in pages:
        title = (DOCS / f"{code}.md").read_text().splitlines()[0]
        assert title == f"# {code} {CODES[code].name}", code
    sources = [p for p in COMPILER.rglob("*.py") if p.name != "codes.py"]
    for code in NO_EMITTER:
        emitters = [p for p in sources if f'"{code}"' in p.read_text()]
        assert not emitters, f"{code} is emitted by {emitters}: document it in docs/diagnostics"


def test_the_index_lists_every_code() -> None:
    readme = (DOCS / "README.md").read_text()
    rows = [line for line in readme.splitlines() if line.startswith("| [GF")]
    assert rows == index_rows()


def _pages() -> list[str]:
    return sorted(p.stem for p in DOCS.glob("GF*.md"))


@pytest.mark.parametrize("code", _pages())
def test_examples_fail_and_pass_as_documented(
    code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = read_page(DOCS / f"{code}.md")
    kinds = [e.kind for e in page.examples]
    if code in WITHOUT_EXAMPLES:
        assert kinds == [], code
        return
    assert kinds == ["FAIL", "PASS"], code
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    all_sessions = []
    for example in page.examples:
        workdir = tmp_path / example.kind
        workdir.mkdir()
        monkeypatch.chdir(workdir)
        sessions = run_example(example, workdir)
        all_sessions += sessions
        runs = [run for _, session in sessions for run in session]
        assert runs, f"{code} {example.kind} runs no command"
        printed = "\n".join(line for run in runs for line in run.output)
        produced = f"[{code}]" in printed
        if example.kind == "FAIL":
            assert produced, f"{code}: the FAIL example does not produce it:\n{printed}"
            registered = CODES[code]
            expected_exit = registered.exit_code if registered.severity is Severity.ERROR else 0
            assert runs[-1].exit_code == expected_exit, (code, runs[-1].exit_code)
            if code not in NOT_IN_A_POLICY_FILE:
                where = "dump\\.yaml" if code in IN_A_DUMP else r"policies/\S+"
                pattern = rf"^{where}:\d+:\d+: \w+\[{code}\]"
                assert re.search(pattern, printed, re.MULTILINE), f"{code} lacks file:line:col"
        else:
            assert not produced, f"{code}: the PASS example produces it:\n{printed}"
            assert all(run.exit_code == 0 for run in runs), (code, [r.exit_code for r in runs])
        if not UPDATE:
            for run in runs:
                assert matches(run.expected, run.output), (
                    f"{code} {example.kind}: `{run.command}` printed\n" + "\n".join(run.output)
                )
    if UPDATE:
        (DOCS / f"{code}.md").write_text(updated_page(page, all_sessions), encoding="utf-8")
