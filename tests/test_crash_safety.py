"""Crash-safety: a compile killed with SIGKILL at any point leaves out/ as the old tree or the
new one, byte for byte, and the next compile recovers and writes the new tree."""

from __future__ import annotations

import json
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

from compiler.pipeline import compile_policies
from compiler.report.previous import read_previous_steering
from compiler.write import write_tree
from compiler.write.atomic import exchange
from tests.conftest import EXAMPLE, REPO


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file below `root` with its bytes; {} when `root` does not exist."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], dict[str, str]]:
    """The example's tree, and the tree after a team change (files changed and removed)."""
    root = tmp_path_factory.mktemp("crash") / "policies"
    shutil.copytree(EXAMPLE, root)
    old = dict(compile_policies(root).tree)
    grant = root / "grants" / "vision.yaml"
    grant.write_text(grant.read_text().replace("guaranteed: 16", "guaranteed: 8"))
    (root / "teams" / "data-science.yaml").unlink()
    (root / "grants" / "data-science.yaml").unlink()
    new = dict(compile_policies(root).tree)
    assert old != new and set(old) != set(new)
    return old, new


def expected(tmp_path: Path, tree: dict[str, str], name: str) -> dict[str, bytes]:
    """What out/ holds after writing `tree` over out/ with the user's own file in it."""
    target = tmp_path / name
    write_tree(target, tree)
    (target / "README.md").write_text("the user's own file\n")
    return snapshot(target)


SCRATCH = Path("/dev/shm") if Path("/dev/shm").is_dir() else None
"""tmpfs when there is one: the test writes the example's tree hundreds of times."""


@pytest.fixture
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(dir=SCRATCH) as directory:
        yield Path(directory)


Run = Callable[..., tuple[int, str, str]]


def run_killed(out: Path, tree_file: Path, kill_at: int | str, swap: str) -> tuple[int, str]:
    command = [sys.executable, "-m", "tests.crash_writer", "write", str(out), str(tree_file)]
    command += [str(kill_at), *(["fallback"] if swap == "fallback" else [])]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout


def test_renameat2_exchange_is_used_here(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    (first / "x").write_text("a")
    assert exchange(first, second)
    assert (second / "x").read_text() == "a"


def reset(out: Path, tree: dict[str, str]) -> None:
    shutil.rmtree(out, ignore_errors=True)
    write_tree(out, tree)
    (out / "README.md").write_text("the user's own file\n")


def kill_points(steps: int, rng: random.Random) -> list[int]:
    """The first and last steps (recovery, staging, the swap, the clean-up) all, and a
    sample of the steps between, where only the invisible staging directory changes."""
    edges = {*range(1, 7), *range(steps - 9, steps + 1)}
    middle = [s for s in range(7, steps - 9) if s not in edges]
    return sorted(edges | set(rng.sample(middle, min(10, len(middle)))))


@pytest.mark.parametrize("swap", ["exchange", "fallback"])
def test_kill_during_a_write_leaves_old_or_new(
    scratch: Path, trees: tuple[dict[str, str], dict[str, str]], swap: str
) -> None:
    old_tree, new_tree = trees
    old, new = expected(scratch, old_tree, "old"), expected(scratch, new_tree, "new")
    tree_file = scratch / "new.json"
    tree_file.write_text(json.dumps(new_tree))
    out = scratch / "out"
    reset(out, old_tree)
    code, said = run_killed(out, tree_file, 0, swap)
    assert code == 0 and snapshot(out) == new
    steps = int(said.split()[-1])
    assert steps > 2 * len(new_tree)  # a write per file, at least
    outcomes = []
    for kill_at in kill_points(steps, random.Random(steps)):
        reset(out, old_tree)
        code, _ = run_killed(out, tree_file, kill_at, swap)
        assert code == -signal.SIGKILL
        after = snapshot(out)
        if swap == "fallback" and not out.exists():
            # the one window without renameat2: out/ renamed aside, the new tree not yet in
            assert snapshot(scratch / ".out.retired") == old
            outcomes.append("moved aside")
        else:
            assert after in (old, new), f"kill at step {kill_at}: out/ is neither tree"
            outcomes.append("old" if after == old else "new")
        write_tree(out, new_tree)  # the next compile recovers
        assert snapshot(out) == new, f"kill at step {kill_at}: no recovery"
        assert not (scratch / ".out.staging").exists()
        assert not (scratch / ".out.retired").exists()
    assert outcomes.count("old") >= 10 and outcomes.count("new") >= 2, outcomes


def test_random_kills_of_the_real_cli_during_its_write(
    scratch: Path, trees: tuple[dict[str, str], dict[str, str]]
) -> None:
    example_tree, changed_tree = trees
    old, new = expected(scratch, changed_tree, "old"), expected(scratch, example_tree, "new")
    out = scratch / "out"
    compile_example = ["compile", "--policies", str(EXAMPLE), "--out", str(out)]
    rng = random.Random(8)
    seen = set()
    for _ in range(2):
        reset(out, changed_tree)
        child = subprocess.Popen(
            [sys.executable, "-m", "tests.crash_writer", "cli", "0.004", "--", *compile_example],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert child.stdout is not None
        assert child.stdout.readline() == b"writing\n"
        time.sleep(rng.uniform(0.0, 1.0))  # the slowed write takes about a second
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        after = snapshot(out)
        assert after in (old, new)
        seen.add("old" if after == old else "new")
        command = [sys.executable, "-m", "compiler", *compile_example]
        done = subprocess.run(command, cwd=REPO, capture_output=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert snapshot(out) == new
    assert "old" in seen


def interrupt_the_swap(out: Path, tree: Mapping[str, str], scratch: Path) -> None:
    """Kill a write of `tree` over `out` where the fallback swap leaves out/ missing (moved
    aside to .out.retired, the new tree not yet in)."""
    tree_file = scratch / "tree.json"
    tree_file.write_text(json.dumps(dict(tree)))
    assert run_killed(out, tree_file, "aside", "fallback")[0] == -signal.SIGKILL
    assert not out.exists() and (out.parent / f".{out.name}.retired").is_dir()


def test_out_is_recovered_before_anything_reads_it(
    run_cli: Run, policy_copy: Path, scratch: Path
) -> None:
    """The plans and the files of an interrupted write's out/ are read only once it is
    restored: `compile --check` finds it up to date, and a compile keeps the MIG layout of
    the restored plan (it read a missing out/: no plan, every node re-partitioned)."""
    out = scratch / "out"
    assert run_cli("compile", "--policies", policy_copy, "--out", out)[0] == 0
    written = snapshot(out)
    interrupt_the_swap(out, {"report.md": "interrupted\n"}, scratch)
    code, said, err = run_cli("compile", "--check", "--policies", policy_copy, "--out", out)
    assert (code, said) == (0, f"ok: {out} is up to date ({len(written) - 1} files)\n"), err
    assert snapshot(out) == written
    team = policy_copy / "teams" / "llm-serving.yaml"
    team.write_text(team.read_text().replace("guaranteed: 48", "guaranteed: 32"))
    kept = compile_policies(policy_copy, previous=read_previous_steering(out)[0]).tree
    assert kept != compile_policies(policy_copy).tree  # the plan read decides the layout
    interrupt_the_swap(out, kept, scratch)
    code, said, err = run_cli("compile", "--policies", policy_copy, "--out", out)
    assert code == 0, err
    assert "prod-east: 0 nodes change MIG configuration" in said
    assert {p: t.encode() for p, t in kept.items()}.items() <= snapshot(out).items()
