"""Benchmark whole `gpufleet compile` runs against the serialization floor (run on demand).

    python benchmarks/run.py                  # S, M, L, XL; median of 5 runs each
    python benchmarks/run.py --sizes S L --runs 3

For each size it generates the fleet (benchmarks/generate.py), then times complete compile
processes (interpreter start included) into a fresh out/ directory: wall and CPU seconds and
peak RSS, plus the stage breakdown that `--timings` prints. In the same run it measures the
serialization floor: dumping the same emitted objects with PyYAML's C dumper and writing them,
nothing else. The table is printed and written to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.generate import SIZES, generate  # noqa: E402

GPUFLEET = [sys.executable, "-m", "compiler"]


@dataclass
class Run:
    """One measured compile process."""

    wall: float
    cpu: float
    rss_mib: float
    stages: dict[str, float]


def _policies(size: str, directory: Path) -> Path:
    root = directory / f"policies-{size}"
    if size == "S":
        shutil.copytree(REPO / "policies", root)
    else:
        generate(SIZES[size], 1, root)
    return root


def compile_once(policies: Path, out: Path, extra: list[str]) -> Run:
    """One `gpufleet compile` process into an empty `out`, measured with wait4."""
    shutil.rmtree(out, ignore_errors=True)
    log = out.with_name(out.name + ".stderr")
    with log.open("w") as errors:  # a file, not a pipe: warnings must not fill a pipe buffer
        start = time.perf_counter()
        process = subprocess.Popen(
            [*GPUFLEET, "compile", "--policies", str(policies), "--out", str(out), "--timings",
             *extra],
            cwd=REPO, stdout=subprocess.DEVNULL, stderr=errors,
        )
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
    stderr = log.read_text()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"compile of {policies} failed:\n{stderr[-2000:]}")
    line = next(ln for ln in stderr.splitlines() if ln.startswith("timings: "))
    stages = {
        name: float(value.rstrip("s"))
        for name, value in (part.split() for part in line.removeprefix("timings: ").split(", "))
    }
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, stages)


def serialization_floor(out: Path, scratch: Path) -> tuple[float, int]:
    """Seconds to dump the emitted objects with the C dumper and write them; object count."""
    documents = [
        (path.relative_to(out), yaml.load(path.read_text(), Loader=yaml.CSafeLoader))
        for path in sorted(out.rglob("*.yaml"))
    ]
    objects = [(p, d) for p, d in documents if isinstance(d, dict) and "kind" in d]
    shutil.rmtree(scratch, ignore_errors=True)
    start = time.perf_counter()
    for relative, document in objects:
        target = scratch / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(yaml.dump(document, Dumper=yaml.CSafeDumper, sort_keys=False))
    return time.perf_counter() - start, len(objects)


def main() -> None:
    """Measure every size asked for and write docs/benchmarks.md."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", nargs="+", default=["S", "M", "L", "XL"])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--write", type=Path, default=REPO / "docs" / "benchmarks.md")
    args = parser.parse_args()
    rows, breakdowns = [], []
    with tempfile.TemporaryDirectory() as directory:
        scratch = Path(directory)
        for size in args.sizes:
            policies = _policies(size, scratch)
            runs = [compile_once(policies, scratch / "out", []) for _ in range(args.runs)]
            validated = compile_once(policies, scratch / "out-validate", ["--validate"])
            floor, objects = serialization_floor(scratch / "out", scratch / "floor")
            wall = statistics.median(r.wall for r in runs)
            rows.append((size, objects, wall, statistics.median(r.cpu for r in runs),
                         max(r.rss_mib for r in runs), floor, wall / floor if floor else 0.0,
                         validated.wall))
            stages = {k: statistics.median(r.stages.get(k, 0.0) for r in runs)
                      for k in runs[0].stages}
            breakdowns.append((size, stages))
            print(f"{size}: {objects} objects, wall {wall:.2f} s", flush=True)
    text = _markdown(rows, breakdowns, args.runs)
    print(text)
    args.write.parent.mkdir(parents=True, exist_ok=True)
    args.write.write_text(text)


def _markdown(rows: list[tuple], breakdowns: list[tuple[str, dict[str, float]]],  # type: ignore[type-arg]
              runs: int) -> str:
    lines = [
        "# Benchmarks",
        "",
        f"Measured by `python benchmarks/run.py` on {platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}; median of {runs} runs of "
        "a whole `gpufleet compile` process into an empty out/ (interpreter start included).",
        "The floor is PyYAML's C dumper writing the same objects, nothing else.",
        "",
        "| size | objects | wall (s) | CPU (s) | peak RSS (MiB) | floor (s) | wall / floor "
        "| wall with --validate (s) |",
        "| :-- | --: | --: | --: | --: | --: | --: | --: |",
    ]
    lines += [
        f"| {s} | {o} | {w:.2f} | {c:.2f} | {r:.0f} | {f:.2f} | {x:.1f} | {v:.2f} |"
        for s, o, w, c, r, f, x, v in rows
    ]
    lines += ["", "Stage breakdown (seconds, median):", ""]
    names = list(breakdowns[0][1]) if breakdowns else []
    lines.append("| size | " + " | ".join(names) + " |")
    lines.append("| :-- | " + " | ".join("--:" for _ in names) + " |")
    lines += [
        f"| {size} | " + " | ".join(f"{stages.get(n, 0.0):.3f}" for n in names) + " |"
        for size, stages in breakdowns
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
