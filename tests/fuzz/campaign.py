"""Run fuzz cases through `gpufleet compile` and judge each (see harness for the contract).

A case is a mutated policy tree compiled into an out/ that already holds its base tree's
good output, so "out/ either old or new" is checked against both trees byte for byte. A
case that breaks the contract is saved (policies, out/ before and after, its output, how it
was made) under the save directory, from which `python -m tests.fuzz replay DIR` runs it
again.
"""

from __future__ import annotations

import hashlib
import json
import os
import select
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from compiler.limits import DEFAULT_TIME_LIMIT
from compiler.pipeline import compile_policies
from compiler.report import read_previous_steering
from compiler.write.lock import lock_path
from tests.fuzz import runner
from tests.fuzz.harness import Outcome, Verdict, judge, snapshot
from tests.fuzz.mutations import Case, draw_case
from tests.fuzz.runner import Child, Finished, Limits
from tests.fuzz.seeds import MIG, SMALL, PolicyTree, example_tree, generated_tree, write_tree
from tests.fuzz.summary import Result, Summary

COMMAND = ("compile", "--policies", "policies", "--out", "out", "--format", "json")
"""What every case runs, in its own directory."""

OWN_FILES = frozenset(
    {"policies", "out", "stdout", "stderr", "expected.json", lock_path(Path("out")).name}
)
"""What a case directory may hold after a run: its own files, out/ and out/'s lock file
(which stays beside out/ by design). Anything else is a leftover."""

SCRATCH = Path("/dev/shm") if Path("/dev/shm").is_dir() else None
"""Where cases run: tmpfs when there is one."""


@dataclass(frozen=True)
class Config:
    """One campaign: which cases, how many at once, the limits, where failures go."""

    seed: str
    cases: int
    first: int = 0
    jobs: int = 1
    limits: Limits = field(default_factory=Limits)
    exec_mode: bool = False
    """Run the `gpufleet` console script for each case instead of a forked child."""
    generated: int = 3
    """Generated base fleets (drawn from the seed), besides the fixed ones."""
    save: Path | None = None
    """Where failing cases are saved (default: gpufleet-fuzz/ in the temp directory)."""


@dataclass(frozen=True)
class Base:
    """A valid tree and its compiled out/ (the old tree every case starts from)."""

    name: str
    tree: PolicyTree
    out: Path
    snapshot: dict[str, bytes]


WEIGHTS = {"small": 5, "mig": 2, "example": 3, "clusters-8": 1}
"""How often each fixed base is drawn; each generated fleet weighs 1."""


def _gpufleet(argv: Sequence[str]) -> int:
    """The `gpufleet` console script's body (it ends the process itself)."""
    from compiler.launch import run

    sys.argv = ["gpufleet", *argv]
    run()


def command(config: Config) -> Callable[[], int] | Sequence[str]:
    if config.exec_mode:
        return [str(Path(sys.executable).with_name("gpufleet")), *COMMAND]
    return partial(_gpufleet, COMMAND)


def _expected(previous_out: Path, target: Path) -> int:
    """Write the tree the pipeline computes for ./policies over `previous_out`'s plans."""
    previous, _ = read_previous_steering(previous_out)
    compiled = compile_policies(Path("policies"), DEFAULT_TIME_LIMIT, previous)
    target.write_text(json.dumps(dict(compiled.tree)), encoding="utf-8")
    return 0


def base_trees(config: Config) -> dict[str, PolicyTree]:
    """The valid trees of a campaign: the fixed ones and those generated from its seed."""
    trees = {
        "small": SMALL,
        "mig": MIG,
        "example": example_tree(),
        "clusters-8": generated_tree("8", 8),
    }
    for k in range(config.generated):
        trees[f"generated-{k}"] = generated_tree(f"{config.seed}:fleet:{k}")
    return trees


class Workspace:
    """A scratch directory, and the bases compiled in it (shared by the campaigns run in
    it: the CI profile's two seeds compile the fixed bases once)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.compiled: dict[str, Base | None] = {}
        """Compiled bases by name and content (None: it did not compile)."""

    def bases(self, config: Config) -> tuple[dict[str, Base], list[str]]:
        """Every base of the campaign compiled into its out/, all at once, each once; and
        the generated ones that do not compile (dropped). A fixed base that does not
        compile is an error."""
        trees = base_trees(config)
        keys = {name: f"{name}-{_digest(tree)}" for name, tree in trees.items()}
        started = {}
        for name, tree in trees.items():
            directory = self.root / "bases" / keys[name]
            if keys[name] in self.compiled:
                continue
            write_tree(directory / "policies", tree)
            stdout, stderr = directory / "stdout", directory / "stderr"
            started[name] = runner.start(command(config), directory, stdout, stderr, config.limits)
        for name, child in started.items():
            finished = runner.reap(child)
            directory = self.root / "bases" / keys[name]
            if finished.status == 0:
                out = directory / "out"
                self.compiled[keys[name]] = Base(name, trees[name], out, snapshot(out))
            elif name in WEIGHTS:
                error = (directory / "stderr").read_text(errors="replace")
                raise RuntimeError(
                    f"base {name} does not compile (exit {finished.status}): {error}"
                )
            else:
                self.compiled[keys[name]] = None
        bases = {name: self.compiled[key] for name, key in keys.items()}
        dropped = sorted(name for name, base in bases.items() if base is None)
        return {name: base for name, base in bases.items() if base is not None}, dropped


def _digest(tree: PolicyTree) -> str:
    hashed = hashlib.sha256()
    for path in sorted(tree):
        hashed.update(path.encode("utf-8", "surrogateescape") + b"\0" + tree[path] + b"\0")
    return hashed.hexdigest()[:16]


@dataclass
class _Running:
    """A case under way: its compile, then (if that exited 0) the in-memory pipeline."""

    case: Case
    base: Base
    directory: Path
    child: Child
    compiled: Finished | None = None
    """How the compile ended, once the in-memory pipeline runs."""


def _start(case: Case, base: Base, config: Config, scratch: Path) -> _Running:
    directory = scratch / f"case-{case.index}"
    write_tree(directory / "policies", case.tree)
    # hard links: a compile never writes into a file of out/ (it would show in the judged
    # bytes, which come from the base's snapshot in memory, not from these files)
    shutil.copytree(base.out, directory / "out", copy_function=os.link)
    child = runner.start(
        command(config), directory, directory / "stdout", directory / "stderr", config.limits
    )
    return _Running(case, base, directory, child)


def _advance(running: _Running, config: Config, save: Path) -> Result | None:
    """Take the next step of a case whose child ended: start the in-memory pipeline after
    a compile that exited 0, or judge the case (and clean up)."""
    ended = runner.reap(running.child)
    directory = running.directory
    compiled_now = running.compiled is None and ended.status == 0 and not ended.timed_out
    # an out/ that is still the old tree keeps the contract: no new tree to compare it with
    if compiled_now and snapshot(directory / "out") != running.base.snapshot:
        running.compiled = ended
        running.child = _start_expected(directory, running.base, config.limits)
        return None
    compiled, new = (ended, None) if running.compiled is None else (running.compiled, ended)
    outcome = observe(directory, running.case.tree, running.base, compiled, new)
    verdict = judge(outcome, config.limits)
    case = running.case
    saved = (
        _save(case, directory, running.base, compiled, verdict, save) if verdict.problems else None
    )
    shutil.rmtree(directory, ignore_errors=True)
    return Result(case, compiled, verdict, saved)


def observe(
    directory: Path, policies: PolicyTree, base: Base, compiled: Finished, new: Finished | None
) -> Outcome:
    """What the run in `directory` left (`new`: how the in-memory pipeline ended, if run)."""
    tree = None
    if new is not None and new.status == 0:
        tree = json.loads((directory / "expected.json").read_text(encoding="utf-8"))
    return Outcome(
        compiled,
        (directory / "stdout").read_text(encoding="utf-8", errors="replace"),
        (directory / "stderr").read_text(encoding="utf-8", errors="replace"),
        policies,
        snapshot(directory / "policies"),
        base.snapshot,
        snapshot(directory / "out"),
        tree,
        tuple(sorted(set(os.listdir(directory)) - OWN_FILES)),
    )


def replay(saved: Path, config: Config) -> Outcome:
    """Run a saved case again (its policies, over its out.before/) and say what it did."""
    with tempfile.TemporaryDirectory(prefix="gpufleet-replay-", dir=SCRATCH) as name:
        directory = Path(name)
        shutil.copytree(saved / "policies", directory / "policies", symlinks=True)
        shutil.copytree(saved / "out.before", directory / "out", symlinks=True)
        base = Base("saved", {}, saved / "out.before", snapshot(saved / "out.before"))
        compiled = runner.run(
            command(config), directory, directory / "stdout", directory / "stderr", config.limits
        )
        new = None
        if compiled.status == 0 and not compiled.timed_out:
            new = runner.reap(_start_expected(directory, base, config.limits))
        return observe(directory, snapshot(saved / "policies"), base, compiled, new)


def _start_expected(directory: Path, base: Base, limits: Limits) -> Child:
    """Compute the tree the pipeline makes in memory for the case's policies, into
    expected.json (in a child too: the parent never runs the pipeline on hostile input)."""
    target = directory / "expected.json"
    null = Path(os.devnull)
    return runner.start(partial(_expected, base.out, target), directory, null, null, limits)


def _save(
    case: Case, directory: Path, base: Base, finished: Finished, verdict: Verdict, save: Path
) -> Path:
    """Keep a failing case where it can be replayed: policies/, out.before/, out.after/,
    its output and case.json."""
    target = save / f"{case.seed}-{case.index:06d}".replace("/", "_")
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    write_tree(target / "policies", case.tree)
    write_tree(target / "out.before", base.snapshot)
    if (directory / "out").is_dir():
        shutil.copytree(directory / "out", target / "out.after", symlinks=True)
    for name in ("stdout", "stderr"):
        if (directory / name).is_file():
            shutil.copy(directory / name, target / name)
    record = {
        "seed": case.seed,
        "index": case.index,
        "base": case.base,
        "mutations": list(case.mutations),
        "command": "rm -rf out && cp -r out.before out && gpufleet " + " ".join(COMMAND),
        "status": finished.status,
        "timed_out": finished.timed_out,
        "seconds": round(finished.seconds, 3),
        "max_rss": finished.max_rss,
        "problems": [str(p) for p in verdict.problems],
    }
    (target / "case.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return target


def default_save(seed: str) -> Path:
    """gpufleet-fuzz/<seed>-<time> in the temp directory: outside the repository."""
    stamp = time.strftime("%Y%m%dT%H%M%S")
    return Path(tempfile.gettempdir()) / "gpufleet-fuzz" / f"{seed}-{stamp}".replace("/", "_")


def run_campaign(
    config: Config,
    progress: Callable[[Summary], None] | None = None,
    workspace: Workspace | None = None,
) -> Summary:
    """Run `config.cases` cases from `config.first`, `config.jobs` at a time (in a scratch
    directory of their own unless a workspace is given)."""
    if workspace is None:
        with tempfile.TemporaryDirectory(prefix="gpufleet-fuzz-", dir=SCRATCH) as name:
            return run_campaign(config, progress, Workspace(Path(name)))
    save = config.save or default_save(config.seed)
    started = time.monotonic()
    bases, dropped = workspace.bases(config)
    summary = Summary(config.seed, sorted(bases), dropped, save)
    weights = {name: WEIGHTS.get(name, 1) for name in bases}
    trees = {name: base.tree for name, base in bases.items()}
    scratch = workspace.root
    indices: Iterator[int] = iter(range(config.first, config.first + config.cases))
    running: list[_Running] = []
    while True:
        while len(running) < config.jobs and (index := next(indices, None)) is not None:
            try:
                case = draw_case(config.seed, index, trees, weights)
            except Exception:  # a bug of the fuzzer's own: reported, and the run goes on
                summary.fuzzer_errors.append(f"case {index}: {traceback.format_exc()}")
                continue
            running.append(_start(case, bases[case.base], config, scratch))
        if not running:
            break
        _wait_any(running)
        for item in [r for r in running if runner.finished(r.child)]:
            running.remove(item)
            result = _advance(item, config, save)
            if result is None:  # its in-memory pipeline runs now
                running.append(item)
                continue
            summary.add(result)
            summary.seconds = time.monotonic() - started
            if progress:
                progress(summary)
    summary.seconds = time.monotonic() - started
    return summary


def _wait_any(running: list[_Running]) -> None:
    """Block until a child ends or the first deadline passes."""
    timeout = max(0.0, min(r.child.deadline for r in running) - time.monotonic())
    select.select([r.child.pidfd for r in running], [], [], timeout)
