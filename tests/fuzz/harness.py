"""The contract every run of `gpufleet compile` keeps, whatever the policies hold.

- It ends, within the time limit, and its memory stays within the bound; no process of its
  own outlives it.
- It exits 0, 1 or 2: never 3 (internal error, solver timeout), never by a signal.
- Its stdout is one diagnostics document (--format json) whose exit code is the run's, each
  diagnostic with a registered code; every error diagnostic has a file, a line and a
  column. Its stderr holds only what the command says as text (`compiled ...`, notes): no
  traceback.
- A non-zero exit has an error diagnostic whose code calls for that exit; exit 0 has none
  and says `compiled`.
- What it writes parses: every YAML file it adds or changes is a stream of mappings.
- out/ is the old tree, byte for byte, or exactly the new one (the tree the pipeline
  computes in memory, plus the list of files gpufleet owns), with nothing left beside it; the
  policies are untouched.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from compiler.diagnostics import CODES
from compiler.write import OWNED_LIST
from tests.fuzz.runner import Finished, Limits

Tree = dict[str, bytes]

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

KINDS = ("hang", "crash", "memory", "stray", "diagnostic", "exit", "out", "emit")
"""Kinds of failure, in the order the summary lists them."""


@dataclass(frozen=True)
class Problem:
    """One broken promise: its kind (one of KINDS) and what was seen."""

    kind: str
    detail: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"


@dataclass(frozen=True)
class Outcome:
    """What a run left behind: how it ended, its output, and the trees to judge."""

    finished: Finished
    stdout: str
    stderr: str
    policies_before: Tree
    policies_after: Tree
    old: Tree
    """out/ before the run."""
    after: Tree
    """out/ after the run."""
    new: dict[str, str] | None
    """The tree the pipeline computes in memory for these policies (None: not computed,
    because the run failed)."""
    leftovers: tuple[str, ...] = ()
    """Names beside out/ that are not out/ or the policies (staging, retired copies)."""


@dataclass
class Verdict:
    """The problems found, and the error codes the run reported."""

    problems: list[Problem] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)


def snapshot(root: Path) -> Tree:
    """Every file below `root` (symlinks as `-> target`), by relative path."""
    tree: Tree = {}
    if not root.is_dir() or root.is_symlink():
        return tree
    for directory, subdirectories, files in os.walk(root):
        prefix = os.path.relpath(directory, root)
        for name in files + [d for d in subdirectories if os.path.islink(f"{directory}/{d}")]:
            path = f"{directory}/{name}"
            relative = name if prefix == "." else f"{prefix}/{name}"
            if os.path.islink(path):
                tree[relative] = b"-> " + os.fsencode(os.readlink(path))
            else:
                with open(path, "rb") as handle:
                    tree[relative] = handle.read()
    return dict(sorted(tree.items()))


def diagnostics(stdout: str, stderr: str) -> tuple[list[dict[str, object]], list[str], int | None]:
    """The diagnostics of a run's JSON document (stdout), the lines of its output that are
    neither the document nor the command's own words, and the exit code the document says."""
    try:
        document = json.loads(stdout)
    except json.JSONDecodeError:
        return [], [f"stdout is not one JSON document: {stdout[:200]!r}"], None
    if not isinstance(document, dict) or not isinstance(document.get("diagnostics"), list):
        return [], [f"stdout is not a diagnostics document: {stdout[:200]!r}"], None
    parsed = [d for d in document["diagnostics"] if isinstance(d, dict)]
    other = [
        line
        for line in stderr.splitlines()
        if line.strip() and not line.startswith(("compiled ", "note: "))
    ]
    summary = document.get("summary")
    exit_code = summary.get("exitCode") if isinstance(summary, dict) else None
    return parsed, other, exit_code if isinstance(exit_code, int) else None


def judge(outcome: Outcome, limits: Limits) -> Verdict:
    """Every way the run broke the contract (none: it kept it)."""
    verdict = Verdict()
    problems = verdict.problems
    finished = outcome.finished
    if finished.timed_out:
        problems.append(Problem("hang", f"no exit within {limits.seconds:g} s"))
        return verdict
    if finished.rss_growth > limits.memory:
        problems.append(
            Problem("memory", f"grew {finished.rss_growth >> 20} MiB (limit {limits.memory >> 20})")
        )
    if finished.stray:
        problems.append(Problem("stray", f"{finished.stray} process(es) outlived the run"))
    found, other, documented = diagnostics(outcome.stdout, outcome.stderr)
    if finished.status not in (0, 1, 2):
        problems.append(Problem("crash", f"exit {finished.status}: {_first(outcome.stderr)}"))
    if other:
        problems.append(Problem("crash", f"output is not diagnostics: {other[0][:200]!r}"))
    elif documented != finished.status:
        problems.append(Problem("exit", f"exit {finished.status}, the document says {documented}"))
    _judge_diagnostics(found, verdict)
    errors = [d for d in found if d.get("severity") == "error"]
    verdict.codes = sorted({str(d.get("code")) for d in errors})
    if finished.status in (1, 2):
        registered = [CODES[str(d["code"])].exit_code for d in errors if d.get("code") in CODES]
        if not errors:
            problems.append(Problem("exit", f"exit {finished.status} without an error"))
        elif max(registered, default=0) != finished.status:
            problems.append(
                Problem("exit", f"exit {finished.status}, but {verdict.codes} call for another")
            )
    if finished.status == 0:
        if errors:
            problems.append(Problem("exit", f"exit 0 with errors {verdict.codes}"))
        if not outcome.stderr.startswith("compiled "):
            problems.append(Problem("exit", f"exit 0 says {outcome.stderr[:100]!r}"))
    _judge_out(outcome, problems)
    return verdict


def _first(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    return (lines[-1] if lines else "no output")[:300]


def _judge_diagnostics(found: list[dict[str, object]], verdict: Verdict) -> None:
    for diagnostic in found:
        code = diagnostic.get("code")
        message = str(diagnostic.get("message"))[:160]
        if code not in CODES:
            verdict.problems.append(Problem("diagnostic", f"unregistered code {code!r}"))
            continue
        if code in ("GF001", "GF002"):
            verdict.problems.append(Problem("crash", f"{code}: {message}"))
        if diagnostic.get("severity") != "error":
            continue
        location = diagnostic.get("location")
        where = location if isinstance(location, dict) else {}
        file, line, column = where.get("file"), where.get("line"), where.get("column")
        if not (isinstance(file, str) and file):
            verdict.problems.append(Problem("diagnostic", f"{code} has no file: {message}"))
        elif not (isinstance(line, int) and line >= 1 and isinstance(column, int) and column >= 1):
            verdict.problems.append(
                Problem("diagnostic", f"{code} at {file} has no line and column: {message}")
            )


def _judge_out(outcome: Outcome, problems: list[Problem]) -> None:
    if outcome.policies_after != outcome.policies_before:
        problems.append(Problem("out", "the policies changed"))
    if outcome.leftovers:
        problems.append(Problem("out", f"left beside out/: {list(outcome.leftovers)}"))
    if outcome.after == outcome.old:
        return
    if outcome.finished.status == 0 and outcome.new is None:
        problems.append(Problem("out", "exit 0, but the same policies fail in memory"))
        return
    if outcome.finished.status != 0 or outcome.new is None:
        change = _delta(outcome.old, outcome.after)
        problems.append(Problem("out", f"out/ changed on exit {outcome.finished.status}: {change}"))
        return
    expected = {path: text.encode("utf-8") for path, text in outcome.new.items()}
    listing = outcome.after.get(OWNED_LIST, b"").decode("utf-8", "replace").splitlines()
    owned = [line for line in listing if line and not line.startswith("#")]
    written = {path: data for path, data in outcome.after.items() if path != OWNED_LIST}
    if written != expected:
        problems.append(Problem("out", f"out/ is neither old nor new: {_delta(expected, written)}"))
    if owned != sorted(expected):
        problems.append(Problem("out", f"{OWNED_LIST} does not list exactly the new tree"))
    changed = {p: t for p, t in outcome.new.items() if outcome.old.get(p) != expected[p]}
    broken = unparsable(changed)
    if broken:
        problems.append(Problem("emit", f"written YAML that does not parse: {broken[:3]}"))


def _delta(expected: Tree, actual: Tree) -> str:
    """A short account of how two trees differ."""
    missing = sorted(set(expected) - set(actual))
    extra = sorted(set(actual) - set(expected))
    changed = sorted(p for p in set(expected) & set(actual) if expected[p] != actual[p])
    parts = [
        f"{what} {paths[:3]}{'...' if len(paths) > 3 else ''}"
        for what, paths in (("missing", missing), ("extra", extra), ("changed", changed))
        if paths
    ]
    return "; ".join(parts)


def unparsable(tree: dict[str, str]) -> list[str]:
    """The YAML files of an emitted tree that do not parse as mappings."""
    broken = []
    for path, text in tree.items():
        if path.endswith(".yaml"):
            try:
                documents = list(yaml.load_all(text, Loader=_LOADER))
            except yaml.YAMLError:
                broken.append(path)
                continue
            if not all(isinstance(d, dict) for d in documents):
                broken.append(path)
    return broken
