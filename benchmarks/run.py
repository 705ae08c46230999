"""Benchmark whole `gpufleet compile` runs against the serialization floor (run on demand).

    python benchmarks/run.py                  # S, M, L, L-mixed, XL; median of 5 runs each
    python benchmarks/run.py --sizes S L --runs 3

It generates each size's fleet (benchmarks/generate.py). With a compile cache of the run's
own, it times `compile --check` with nothing changed (what CI runs on most pull requests),
with and without the cache. Then it times complete compile processes (interpreter start
included), in rounds over the sizes: each into an empty out/ directory without the compile
cache (wall and CPU seconds and peak RSS, plus the stage breakdown that `--timings` prints),
and right after it, with the cache, a compile after one team's guarantee changed (a new
value each round), so that the two meet the same machine. In the same run it measures the
serialization floor: dumping the same emitted objects with PyYAML's C dumper and writing
them, nothing else; and `compile --validate` once. The table, with the
issue 20 targets and whether this run met them, is printed and written to docs/benchmarks.md.

Every run writes into a directory of its own and nothing is deleted until the end: on ext4,
creating files right after deleting thousands makes the inode allocator skip every recently
freed inode, which once made writing out/ 10x slower than on a quiet file system (perf:
find_inode_bit -> recently_deleted). Run it on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import compileall
import os
import platform
import re
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
    root = directory / f"fleet-{size}" / "policies"
    if size == "S":  # the example fleet, with the CODEOWNERS its Fleet asks for
        shutil.copytree(REPO / "policies", root)
        shutil.copytree(REPO / ".github", root.parent / ".github")
    else:
        generate(SIZES[size], 1, root)
    return root


def compile_once(
    policies: Path, out: Path, extra: list[str], cache: Path | None = None, repo: Path = REPO
) -> Run:
    """One `gpufleet compile` process into `out`, measured with wait4; with the compile
    cache in `cache`, else without one; by the `compiler` package of the checkout `repo`."""
    log = out.with_name(out.name + ".stderr")
    env = dict(os.environ)
    env.pop("GPUFLEET_NO_CACHE", None)
    if cache is None:
        env["GPUFLEET_NO_CACHE"] = "1"
    else:
        env["GPUFLEET_CACHE"] = str(cache)
    with log.open("w") as errors:  # a file, not a pipe: warnings must not fill a pipe buffer
        start = time.perf_counter()
        process = subprocess.Popen(
            [
                *GPUFLEET,
                "compile",
                "--policies",
                str(policies),
                "--out",
                str(out),
                "--timings",
                *extra,
            ],
            cwd=repo,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=errors,
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
    stages["start-up and rest"] = wall - sum(stages.values())
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, stages)


def serialization_floor(out: Path, scratch: Path) -> tuple[float, int]:
    """Seconds to dump the emitted objects with the C dumper and write them; object count."""
    documents = [
        (path.relative_to(out), yaml.load(path.read_text(), Loader=yaml.CSafeLoader))
        for path in sorted(out.rglob("*.yaml"))
    ]
    objects = [(p, d) for p, d in documents if isinstance(d, dict) and "kind" in d]
    start = time.perf_counter()
    for relative, document in objects:
        target = scratch / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(yaml.dump(document, Dumper=yaml.CSafeDumper, sort_keys=False))
    return time.perf_counter() - start, len(objects)


@dataclass
class Row:
    """One size's measurements (walls in seconds)."""

    size: str
    objects: int
    runs: list[Run]
    floor: float
    check: list[float]
    """`compile --check`, nothing changed, answered from the compile cache."""
    uncached_check: list[float]
    """The same without the cache: a full compile compared with out/."""
    one_team: list[float]
    """A compile with the cache after one team's guarantee changed."""
    validate: float

    def median(self, value: str) -> float:
        """The median of one measure over the runs."""
        return float(statistics.median(getattr(run, value) for run in self.runs))


def measure(sizes: list[str], runs: int, scratch: Path) -> list[Row]:
    """Compile every size `runs` times, in rounds over the sizes (so that a stretch of slow
    machine weighs on every size alike), each round a full compile and then a compile after
    a one-team change with the cache, back to back: the machine's speed drifts by a third
    within minutes, and the two are compared with each other. Before the rounds, each size's
    no-change checks; after them, validate and the floor."""
    policies = {size: _policies(size, scratch) for size in sizes}
    cached = {size: CachedFleet(policies[size], scratch / f"cached-{size}") for size in sizes}
    checks = {size: cached[size].checks(runs) for size in sizes}
    compiled: dict[str, list[Run]] = {size: [] for size in sizes}
    one_team: dict[str, list[float]] = {size: [] for size in sizes}
    for n in range(runs):
        for size in sizes:
            out = scratch / f"out-{size}-{n}"
            compiled[size].append(compile_once(policies[size], out, []))
            one_team[size].append(cached[size].one_team(n + 1))
        print(f"round {n + 1} of {runs} done", flush=True)
    rows = []
    for size in sizes:
        cached[size].restore()
        validate = compile_once(policies[size], scratch / f"out-{size}-v", ["--validate"]).wall
        floor, objects = serialization_floor(scratch / f"out-{size}-0", scratch / f"floor-{size}")
        check, uncached = checks[size]
        rows.append(
            Row(size, objects, compiled[size], floor, check, uncached, one_team[size], validate)
        )
        print(f"{size}: validate and floor done", flush=True)
    return rows


class CachedFleet:
    """A fleet compiled with a compile cache of its own below `directory`, twice (the second
    over its own plans: what a repository holds), so that the cache is full."""

    def __init__(self, policies: Path, directory: Path) -> None:
        self.policies = policies
        self.cache, self.out = directory / "cache", directory / "out"
        directory.mkdir()
        for _ in range(2):
            compile_once(policies, self.out, [], self.cache)
        self.team, self.quota = next(
            (path, found)
            for path in sorted((policies / "grants").glob("*.yaml"))
            if (found := QUOTA.search(path.read_text()))
        )
        self.original = self.team.read_text()

    def checks(self, runs: int) -> tuple[list[float], list[float]]:
        """`runs` no-change checks with the cache, then `runs` without it."""
        check = [
            compile_once(self.policies, self.out, ["--check"], self.cache).wall for _ in range(runs)
        ]
        uncached = [compile_once(self.policies, self.out, ["--check"]).wall for _ in range(runs)]
        return check, uncached

    def one_team(self, n: int) -> float:
        """A compile with the cache after one team's quota limit rose by 8 * `n` (a value
        it had not had, so a change the cache has not seen; by 8 so that gangs of up to 8
        stay whole)."""
        found, text = self.quota, self.original
        raised = int(found[2]) + 8 * n
        self.team.write_text(f"{text[: found.start(2)]}{raised}{text[found.end(2) :]}")
        return compile_once(self.policies, self.out, [], self.cache).wall

    def restore(self) -> None:
        """The team file as it was."""
        self.team.write_text(self.original)


QUOTA = re.compile(r"guaranteed: ([0-9]+), limit: ([0-9]+)")


CALIBRATION = "x = 0\nfor i in range(5_000_000):\n    x += i * i % 7\n"
"""A fixed pure-Python loop: its time says how fast this machine was during the run (on a
shared VM it varies by a third from one minute to the next)."""


def file_system(path: Path) -> str:
    """`/mount/point (type)` of the file system holding `path`, from /proc/mounts."""
    resolved, best = str(path.resolve()), ("?", "?")
    with open("/proc/mounts") as mounts:
        for line in mounts:
            _, point, kind, *_ = line.split()
            inside = resolved == point or resolved.startswith(point.rstrip("/") + "/")
            if inside and len(point) >= len(best[0]):
                best = (point, kind)
    return f"{best[0]} ({best[1]})"


def bytecode(repo: Path = REPO) -> None:
    """Compile the bytecode of the checkout `repo`'s package, as pip does when it installs
    gpufleet: each measured process then imports it as an installed gpufleet would (with
    PYTHONDONTWRITEBYTECODE=1 and no bytecode, every run would compile 0.1 s of source
    first)."""
    if not compileall.compile_dir(repo / "compiler", quiet=1):
        raise SystemExit(f"cannot compile the bytecode of {repo / 'compiler'}")


def calibration() -> float:
    """Seconds the calibration loop takes in a fresh interpreter (the best of three)."""
    times = []
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", CALIBRATION], check=True)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    """Measure every size asked for and write docs/benchmarks.md."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sizes", nargs="+", choices=["S", *SIZES], default=["S", "M", "L", "L-mixed", "XL"]
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--write", type=Path, default=REPO / "docs" / "benchmarks.md")
    parser.add_argument(
        "--scratch",
        type=Path,
        default=None,
        help="where fleets and outputs go, made if missing (default: $TMPDIR)",
    )
    args = parser.parse_args()
    bytecode()
    speed = [calibration()]
    with scratch_directory(args.scratch) as directory:
        rows = measure(args.sizes, args.runs, Path(directory))
        speed.append(calibration())
        where = file_system(Path(directory))
    text = _markdown(rows, args.runs, speed, where)
    print(text)
    args.write.parent.mkdir(parents=True, exist_ok=True)
    args.write.write_text(text + _kept_section(args.write))


def scratch_directory(within: Path | None) -> tempfile.TemporaryDirectory[str]:
    """A directory of the run's own for fleets and outputs: in `within` (made if missing),
    else in $TMPDIR; removed when the run ends."""
    if within is not None:
        within.mkdir(parents=True, exist_ok=True)
    return tempfile.TemporaryDirectory(dir=within)


KEPT_SECTION = "## Speed tricks"
"""The section of docs/benchmarks.md that records which speed tricks earned their place (timed
with and without each, in the same rounds): measured by hand, so a new run keeps it."""


def _kept_section(path: Path) -> str:
    """The kept section of the file at `path`, from its heading to the end ("" if none)."""
    old = path.read_text() if path.exists() else ""
    at = old.find("\n" + KEPT_SECTION)
    return old[at:] if at >= 0 else ""


TARGETS = (
    # (size, what, measure, limit, unit): issue 20's targets
    ("L", "full compile", "wall", 1.2, "s"),
    ("L", "no-change check", "check", 0.4, "s"),
    ("L", "no-change check / full compile", "check_ratio", 0.35, "x"),
    ("L", "one-team change / full compile", "one_team_ratio", 0.5, "x"),
    ("XL", "full compile", "wall", 4.0, "s"),
    ("L", "peak RSS", "rss", 200, "MiB"),
    ("XL", "peak RSS", "rss", 400, "MiB"),
)


def _measures(row: Row) -> dict[str, float]:
    wall = row.median("wall")
    check, one_team = statistics.median(row.check), statistics.median(row.one_team)
    return {
        "wall": wall,
        "check": check,
        "check_ratio": check / wall,
        "one_team_ratio": one_team / wall,
        "rss": max(r.rss_mib for r in row.runs),
    }


def _markdown(rows: list[Row], runs: int, speed: list[float], where: str) -> str:
    lines = [
        "# Benchmarks",
        "",
        f"Measured by `python benchmarks/run.py` on {platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}; median of {runs} runs of "
        "a whole `gpufleet` process (interpreter start included). A full compile writes into an",
        "empty out/ without the compile cache, in rounds over the sizes. The floor is PyYAML's",
        "C dumper writing the same objects, nothing else. With a compile cache of the run's own",
        "(filled by two compiles): check is `compile --check` with nothing changed, answered",
        "from the cache, and without it (what a check without a cache costs: a full compile",
        "compared with out/); one team is a compile after one team's quota limit rose",
        "(a new value each run), right after each full compile, in the same rounds.",
        f"Machine speed: a fixed pure-Python loop took {speed[0]:.2f} s before the runs and "
        f"{speed[-1]:.2f} s after (lower is faster). Fleets and outputs on {where}.",
        "",
        "| size | objects | full (s) | CPU (s) | peak RSS (MiB) | floor (s) | full / floor "
        "| check (s) | check / full | check without cache (s) | one team (s) | one team / full "
        "| full with --validate (s) |",
        "| :-- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |",
    ]
    for row in rows:
        wall, measured = row.median("wall"), _measures(row)
        lines.append(
            f"| {row.size} | {row.objects} | {wall:.2f} | {row.median('cpu'):.2f} "
            f"| {measured['rss']:.0f} | {row.floor:.2f} "
            f"| {wall / row.floor if row.floor else 0.0:.1f} | {measured['check']:.2f} "
            f"| {measured['check_ratio']:.2f} | {statistics.median(row.uncached_check):.2f} "
            f"| {statistics.median(row.one_team):.2f} | {measured['one_team_ratio']:.2f} "
            f"| {row.validate:.2f} |"
        )
    lines += ["", "Stage breakdown of the full compile (seconds, median):", ""]
    names = list(rows[0].runs[0].stages) if rows else []
    lines.append("| size | " + " | ".join(names) + " |")
    lines.append("| :-- | " + " | ".join("--:" for _ in names) + " |")
    for row in rows:
        medians = [statistics.median(r.stages.get(n, 0.0) for r in row.runs) for n in names]
        lines.append(f"| {row.size} | " + " | ".join(f"{m:.3f}" for m in medians) + " |")
    by_size = {row.size: _measures(row) for row in rows}
    lines += ["", "Issue 20's targets, in this run:", ""]
    lines += ["| size | target | limit | measured | met |", "| :-- | :-- | --: | --: | :-- |"]
    for size, what, measure_name, limit, unit in TARGETS:
        if size in by_size:
            value = by_size[size][measure_name]
            shown = f"{value:.2f} {unit}" if unit != "MiB" else f"{value:.0f} {unit}"
            met = "yes" if value <= limit else "no"
            lines.append(f"| {size} | {what} | <= {limit} {unit} | {shown} | {met} |")
    return "\n".join([*lines, "", NOTES]) + "\n"


NOTES = """\
Reading the numbers:

- load is reading and parsing the policy files, in worker processes for hundreds of files (and
  reading the previous plans); cache is looking clusters up in the compile cache and storing
  them (with a cache only); solve+emit is each cluster solved and then emitted in one task (in
  worker processes for 8 clusters or more), as far as the compile waits for it: a task starts
  as soon as its cluster is found to have no cache entry, before any entry is read, so the
  lookups run meanwhile; emit is the fleet-wide files (Argo CD's, report.md);
- check reads every file of out/, in a process forked beside the one that takes the
  compile key (compiler/cache/out_reader.py); its five runs follow two compiles within
  seconds. The indexes of out/ and of the policy directory (compiler/cache/file_index.py)
  spare a check, and the key of a compile, every file whose lstat has not changed since the
  previous run of the same directory, from its third run on (the first keeps the directory's
  identity, the second its files); a file may be kept once its file system stamped it
  before the run started (compiler/cache/settled.py); a compile with the cache leaves the
  new out/'s index with the files it carried, so a check after it reads only the files it
  wrote; when each lstat is the one out/'s index kept, the index is kept whole by comparing
  two byte strings, with no lookup per file;
- a compile after a one-team change still loads, models and resolves the whole fleet (files
  the cache parsed before are not parsed again, nor read: the policy directory's index
  vouches for their digests), fingerprints only the clusters whose files changed (the others'
  fingerprints are kept under a name of their files), then solves and emits only the
  clusters the team is in (the first in a worker forked and warmed up before load), and
  writes out/: unchanged files are hard links to the old ones, which a process forked at the
  start of the compile has already made (Speed tricks, below), reading only the files of
  out/ that the last compile wrote (out/'s index has the others), and their digests come
  from the cache (their texts stay packed), so the write itself only rewrites what changed
  and swaps; the old tree goes to the cache's trash, which the next compile's forked process
  empties (compiler/write/trash.py);
- peak RSS is that of the process holding the fleet and every emitted file; importing
  pydantic and the stages takes 56 MiB of it before a policy is read (the solver, the
  emitters, OR-Tools and numpy are imported only where a cluster is compiled: in the workers
  of a large fleet);
- each compile is a whole process, start-up included (about 0.2 s of imports: pydantic's
  model classes, the stages), with the package's bytecode compiled first, as pip compiles
  an installed gpufleet's;
- the machine these numbers come from is a shared VM whose speed moves by up to 40% from one
  minute to the next; the calibration line says how fast it was, and wall / floor compares
  gpufleet with work measured in the same run;
- outputs go to tmpfs on this VM because its root file system is ext4 without a journal,
  where creating files within a minute or so of deleting thousands makes the inode allocator
  skip every recently freed inode (perf: find_inode_bit -> recently_deleted): the same L
  compile wrote out/ in 0.2 s or in 5.7 s depending on what had been deleted just before.
  `--scratch DIR` measures on another file system."""


if __name__ == "__main__":
    main()
