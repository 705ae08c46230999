"""Incremental compile (issue 20): a compile that reuses cached clusters writes exactly what a
compile from scratch writes, whatever sequence of edits came before.

Each case is a random two-cluster fleet (tests/random_fleets.py), compiled, compiled again
unchanged (both clusters must be reused), then edited step by step at random: a number in a
policy file moved up or down, a comment line added (positions move, values do not), a file
deleted, whole documents moved between files (their origins and indexes change, their bytes
do not), an earlier version of a file put back (the edit most likely to find a stale entry),
or nothing. The fleet has a Fleet and a priority ladder too, which every cluster reads.
After every step the same policies are compiled twice, each over its own out/: once with
the cache (reusing what earlier steps stored), once without it. Their exit codes and their
out/ trees must be equal byte for byte, including when the edit broke the fleet.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from compiler.cache.clusters import ClusterCache, ClusterResult
from compiler.file_bytes import FileDigest
from compiler.write import writer
from tests.policy_edits import move_documents, put, write_fleet
from tests.random_fleets import fleet

Cli = Callable[..., tuple[int, str, str]]
SEEDS = (6, 10, 19, 33, 37, 53, 56)
"""Seeds whose generated fleet has two clusters and is feasible (so steps can reuse one)."""
STEPS = 10
NUMBER = re.compile(r"(?<=: )[0-9]+\b")


def _tree(out: Path) -> dict[str, bytes]:
    if not out.is_dir():
        return {}
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}


def _edit(rng: random.Random, policies: Path, versions: dict[str, list[str | None]]) -> str:
    """Apply one random edit to the policy tree, recording each file's versions (None:
    deleted); what it did, for the failure message."""
    kind = rng.choice(
        ("number",) * 3 + ("comment", "delete", "documents", "restore", "restore", "none")
    )
    if kind == "none":
        return "nothing (compiled again)"
    if kind == "documents":
        what, before = move_documents(rng, policies)
        for path, text in before.items():
            now = path.read_text() if path.exists() else None
            versions.setdefault(path.relative_to(policies).as_posix(), [text]).append(now)
        return what
    touched = sorted(relative for relative, texts in versions.items() if len(texts) > 1)
    if kind == "restore" and touched:
        relative = rng.choice(touched)
        put(policies / relative, versions[relative][-2])
        versions[relative].append(versions[relative][-2])
        return f"restored {relative}"
    files = sorted(p.relative_to(policies).as_posix() for p in policies.rglob("*.yaml"))
    relative = rng.choice(files)
    text = (policies / relative).read_text()
    edited: str | None = text
    if kind == "delete" and not relative.startswith("clusters/"):
        edited, did = None, "deleted"
    elif kind == "comment":
        edited, did = f"# edited\n{text}", "commented"
    elif numbers := list(NUMBER.finditer(text)):
        found = rng.choice(numbers)
        value = max(0, int(found.group()) + rng.choice((-1, 1, 2)))
        edited, did = f"{text[: found.start()]}{value}{text[found.end() :]}", f"set {value} in"
    else:
        return f"left {relative} as it was"
    put(policies / relative, edited)
    versions.setdefault(relative, [text]).append(edited)
    return f"{did} {relative}"


@pytest.mark.parametrize(
    ("seed", "workers"),
    [(seed, "1") for seed in SEEDS] + [(seed, "2") for seed in SEEDS[:2]],
)
def test_incremental_compiles_equal_compiles_from_scratch(
    seed: int, workers: str, run_cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With `workers` 2, the cached compile solves and emits in worker processes, started
    while the parent looks the other cluster up; the compile from scratch runs in-process."""
    policies, cached_out, scratch_out = (tmp_path / n for n in ("policies", "cached", "scratch"))
    write_fleet(policies, fleet(seed))
    read: list[bool] = []
    real_read = ClusterCache.read

    def counted_read(self: ClusterCache, key: str, cluster: str) -> ClusterResult | None:
        result = real_read(self, key, cluster)
        read.append(result is not None)
        return result

    monkeypatch.setattr(ClusterCache, "read", counted_read)
    monkeypatch.setenv("GPUFLEET_CACHE", str(tmp_path / "cache"))
    rng = random.Random(f"incremental-{seed}")
    versions: dict[str, list[str | None]] = {}
    done = ["the generated fleet"]
    for step in range(STEPS + 1):
        if step == 1:
            done.append("nothing (compiled again)")
        elif step > 1:
            done.append(_edit(rng, policies, versions))
        monkeypatch.delenv("GPUFLEET_NO_CACHE", raising=False)
        monkeypatch.setenv("GPUFLEET_WORKERS", workers)
        cached = run_cli("compile", "--policies", policies, "--out", cached_out)[0]
        monkeypatch.setenv("GPUFLEET_NO_CACHE", "1")
        monkeypatch.setenv("GPUFLEET_WORKERS", "1")
        scratch = run_cli("compile", "--policies", policies, "--out", scratch_out)[0]
        assert cached == scratch, f"seed {seed}, after {done}: exit {cached} != {scratch}"
        assert _tree(cached_out) == _tree(scratch_out), f"seed {seed}, after {done}"
        assert step or cached == 0, f"seed {seed}: the generated fleet does not compile"
        if step == 1:
            assert read == [True, True], (
                f"seed {seed}: compiled again, it did not reuse both clusters"
            )


def test_the_write_hashes_none_of_the_files_the_cache_gave_or_kept(
    run_cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A result the cache keeps carries each file's digest (taken where it was emitted), and
    one it gives back carries them too: comparing with out/ and recording out/ hash only the
    fleet-wide files (Argo CD's, report.md, the listing), never a cluster's, whether the
    cluster was compiled afresh (first) or reused (second: a comment moved every position,
    no value)."""
    policies, out = tmp_path / "policies", tmp_path / "out"
    write_fleet(policies, fleet(SEEDS[0]))
    monkeypatch.setenv("GPUFLEET_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("GPUFLEET_NO_CACHE", raising=False)
    hashed: list[str] = []
    real = writer.text_digest

    def counted(text: str) -> FileDigest:
        hashed.append(text)
        return real(text)

    monkeypatch.setattr(writer, "text_digest", counted)
    for step in ("afresh", "reused"):
        hashed.clear()
        if step == "reused":
            team = sorted((policies / "teams").glob("*.yaml"))[0]
            team.write_text(f"# moved\n{team.read_text()}")
        assert run_cli("compile", "--policies", policies, "--out", out)[0] == 0
        files = _tree(out)
        clusters = {p for p in files if p.startswith(("clusters/", "plan/"))}
        assert clusters and hashed, step
        assert not {files[p].decode() for p in clusters} & set(hashed), step
