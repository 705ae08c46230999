"""Time full compiles of this tree against another checkout's, in the same rounds (run on
demand, never in the test suites).

    git worktree add /tmp/before 1de91d6      # the tree issue 20 was filed on
    .venv/bin/python benchmarks/against.py /tmp/before --sizes L XL

The shared VM these benchmarks run on changes speed from one day to the next by more than
any change to gpufleet does, so seconds measured on different days do not compare. This
script compares two trees on the same machine in the same minutes: each round runs a whole
`python -m compiler compile` process of each checkout (its own `compiler` package, imported
from its directory; the same Python and libraries) into an empty out/, without the compile
cache, in alternating order. Both compile the same fleet: each tree's
benchmarks/generate.py makes it, and the script stops if the two differ in any byte (a
policy language that changed between the trees needs a comparison by hand).
"""

from __future__ import annotations

import argparse
import filecmp
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.generate import SIZES  # noqa: E402
from benchmarks.run import bytecode, calibration, compile_once, scratch_directory  # noqa: E402


def same_fleet(size: str, other: Path, scratch: Path) -> Path:
    """The fleet of `size` made by both trees' generators (the same seed as benchmarks/run.py),
    after checking that the two are the same files with the same bytes."""
    made = []
    for repo, name in ((REPO, "this"), (other, "other")):
        policies = scratch / f"fleet-{size}-{name}" / "policies"
        command = [sys.executable, "benchmarks/generate.py", "--size", size, "--seed", "1"]
        subprocess.run([*command, str(policies)], cwd=repo, check=True, capture_output=True)
        made.append(policies)
    if not _same_tree(*made):
        raise SystemExit(f"the two trees generate different {size} fleets: compare by hand")
    return made[0]


def _same_tree(left: Path, right: Path) -> bool:
    """Whether two directories hold the same files with the same bytes."""
    found = filecmp.dircmp(left, right)
    if found.left_only or found.right_only or found.funny_files:
        return False
    _, differ, errors = filecmp.cmpfiles(left, right, found.common_files, shallow=False)
    if differ or errors:
        return False
    return all(_same_tree(left / name, right / name) for name in found.common_dirs)


def measure(size: str, other: Path, runs: int, scratch: Path) -> str:
    """One size's table row: medians of this tree and of `other`, and the median of the
    per-round ratios (this / other)."""
    policies = same_fleet(size, other, scratch)
    times: dict[Path, list[float]] = {REPO: [], other: []}
    for n in range(runs):
        for repo in (REPO, other) if n % 2 == 0 else (other, REPO):
            out = scratch / f"out-{size}-{n}-{'this' if repo == REPO else 'other'}"
            times[repo].append(compile_once(policies, out, [], repo=repo).wall)
        print(f"{size}: round {n + 1} of {runs} done", flush=True)
    ratio = statistics.median(a / b for a, b in zip(times[REPO], times[other], strict=True))
    this, before = statistics.median(times[REPO]), statistics.median(times[other])
    return f"| {size} | {before:.2f} | {this:.2f} | {ratio:.3f} |"


def main() -> None:
    """Measure the sizes asked for and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("other", type=Path, help="a checkout of the tree to compare with")
    parser.add_argument("--sizes", nargs="+", default=["L"], choices=sorted(SIZES))
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument(
        "--scratch",
        type=Path,
        default=None,
        help="where fleets and outputs go, made if missing (default: $TMPDIR)",
    )
    args = parser.parse_args()
    other = args.other.resolve()
    if other == REPO:
        raise SystemExit(f"{args.other} is this tree: give a checkout of another")
    if not (other / "compiler").is_dir():
        raise SystemExit(f"{args.other} is not a checkout of gpufleet (it has no compiler/)")
    for repo in (REPO, other):
        bytecode(repo)
    speed = [calibration()]
    with scratch_directory(args.scratch) as directory:
        rows = [measure(size, other, args.runs, Path(directory)) for size in args.sizes]
    speed.append(calibration())
    print(
        f"\nMedian of {args.runs} whole compile processes each (seconds); the calibration loop "
        f"of benchmarks/run.py took {speed[0]:.2f} s before and {speed[-1]:.2f} s after.\n\n"
        f"| size | {args.other} | this tree | this / other, per round |\n| :-- | --: | --: | --: |"
    )
    print("\n".join(rows))


if __name__ == "__main__":
    main()
