"""Start reading a large policy directory before the rest of gpufleet is imported.

Importing the later stages (pydantic models, OR-Tools, Jinja2, the CEL engine) takes a few
tenths of a second on one core while the other waits. For a directory of hundreds of files the
`gpufleet` command therefore forks its file readers first (`start`, from compiler.launch),
imports the rest while they read, and `load_policies` takes their results (`take`), which are
the same documents and problems it would have produced itself. A guess that does not match
what the command line turns out to mean is dropped, and the files are read as usual.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from multiprocessing.pool import AsyncResult, Pool
from pathlib import Path

from compiler.diagnostics import Diagnostic
from compiler.load.document import SourceDocument
from compiler.load.loader import load_tasks, policy_files, read_files
from compiler.parallel import fork_pool, worker_count

READING_COMMANDS = frozenset({"compile", "check", "diff", "report", "render", "explain"})
"""Commands that read the policy directory (`--policies`, default `policies`)."""

Loaded = list[tuple[list[SourceDocument], list[Diagnostic]]]


@dataclass
class _Reading:
    root: Path
    files: list[Path]
    pool: Pool
    result: AsyncResult[Loaded]


_reading: _Reading | None = None


def start(argv: Sequence[str]) -> None:
    """Fork readers for the policy directory `argv` names, if it is large enough to pay off.

    Never raises: whatever goes wrong here (an unreadable directory, say) happens again in
    `load_policies`, which reports it as a diagnostic.
    """
    global _reading
    root = policies_argument(argv)
    try:
        if root is None or not root.is_dir():
            return
        files = policy_files(root)
    except OSError:
        return
    tasks = load_tasks(files)
    workers = worker_count(len(tasks))
    if workers <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return
    pool = fork_pool(workers)  # readers die with gpufleet, even if it is SIGKILLed
    read = partial(read_files, root, root.resolve(), Path.cwd().resolve())
    _reading = _Reading(root, files, pool, pool.map_async(read, tasks, chunksize=1))


def take(root: Path, files: list[Path]) -> Loaded | None:
    """The readers' results if they read `files` of `root`; None (and readers dropped) if not."""
    global _reading
    reading, _reading = _reading, None
    if reading is None:
        return None
    try:
        if reading.root != root or reading.files != files:
            return None
        return reading.result.get()
    finally:
        reading.pool.terminate()


def discard() -> None:
    """Stop readers nobody took (the command failed before loading)."""
    take(Path(), [])


def policies_argument(argv: Sequence[str]) -> Path | None:
    """The policy directory of a command line that reads one: `--policies DIR`,
    `--policies=DIR` or the default `policies`; None for other commands."""
    if not argv or argv[0] not in READING_COMMANDS:
        return None
    for index, word in enumerate(argv):
        if word == "--policies" and index + 1 < len(argv):
            return Path(argv[index + 1])
        if word.startswith("--policies="):
            return Path(word.removeprefix("--policies="))
    return Path("policies")
