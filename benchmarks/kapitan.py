"""Time Kapitan rendering the objects gpufleet emits for a fleet (issue 20's optional
comparison; run on demand, never in the test suites).

    python3 -m venv /tmp/kapitan && /tmp/kapitan/bin/pip install kapitan
    .venv/bin/python benchmarks/kapitan.py --kapitan /tmp/kapitan/bin/kapitan --sizes L XL

Kapitan is not a dependency of gpufleet, not even a development one: it pins versions of
libraries gpufleet uses, so it goes in a virtual environment of its own and its command is
passed here. For each size the generated fleet is compiled by gpufleet (a whole process into
an empty out/, without the compile cache, as benchmarks/run.py times it); then a Kapitan
project is made with one target per cluster (and one for the fleet-wide objects) whose kadet
component returns exactly the objects gpufleet wrote for it, each under its path below out/
(read from a JSON file per target), so that `kapitan compile` writes the same objects to the
same paths. Rounds alternate gpufleet, Kapitan with its defaults and Kapitan with
`--mp-method fork`, so that all three see the same machine; the table gives medians.

Kapitan solves, resolves and checks nothing here: it is what a mainstream renderer costs to
start, run a component per target and write these objects, against gpufleet's whole compile.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.generate import SIZES, generate  # noqa: E402
from benchmarks.run import compile_once  # noqa: E402

COMPONENT = '''\
import json
from pathlib import Path

from kapitan.inputs.kadet import inventory

DATA = Path(__file__).resolve().parent.parent.parent / "data"


def main():
    """Every object of this target, under its path below out/."""
    target = inventory().parameters.kapitan.vars.target
    return json.loads((DATA / f"{target}.json").read_text())
'''
"""The kadet component: its output's keys are file paths, its values the objects (read from
a JSON file per target: an inventory holding them all makes reclass, Kapitan's default
inventory, take 15 times as long as the rendering, 37 s on fleet L)."""


def kapitan_project(out: Path, project: Path) -> int:
    """Write a Kapitan project rendering every object of `out` (a gpufleet output tree);
    the number of objects."""
    targets: dict[str, dict[str, object]] = {}
    for path in sorted(out.rglob("*.yaml")):
        relative = path.relative_to(out).as_posix()
        document = yaml.load(path.read_text(), Loader=yaml.CSafeLoader)
        if not isinstance(document, dict) or "kind" not in document:
            continue
        parts = relative.split("/")
        target = parts[1] if parts[0] == "clusters" else "fleet"
        below = "/".join(parts[2:]) if parts[0] == "clusters" else relative
        targets.setdefault(target, {})[below] = document
    for name, objects in targets.items():
        data = project / "data" / f"{name}.json"
        data.parent.mkdir(parents=True, exist_ok=True)
        data.write_text(json.dumps(objects))
        inventory = {
            "parameters": {
                "kapitan": {
                    "vars": {"target": name},
                    "compile": [
                        {
                            "output_path": ".",
                            "input_type": "kadet",
                            "output_type": "auto",
                            "input_paths": ["components/objects"],
                        }
                    ],
                },
            }
        }
        target_file = project / "inventory" / "targets" / f"{name}.yml"
        target_file.parent.mkdir(parents=True, exist_ok=True)
        target_file.write_text(yaml.dump(inventory, Dumper=yaml.CSafeDumper, sort_keys=False))
    (project / "inventory" / "classes").mkdir()  # reclass wants the directory
    component = project / "components" / "objects" / "__init__.py"
    component.parent.mkdir(parents=True)
    component.write_text(COMPONENT)
    return sum(len(objects) for objects in targets.values())


def kapitan_once(kapitan: str, project: Path, compiled: Path, options: list[str]) -> float:
    """Seconds of one whole `kapitan compile` process writing into `compiled`."""
    start = time.perf_counter()
    subprocess.run(
        [kapitan, *options, "compile", "--output-path", str(compiled)],
        cwd=project,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - start


def written(compiled: Path) -> int:
    """The files a Kapitan compile wrote."""
    return sum(1 for path in compiled.rglob("*") if path.is_file())


def measure(kapitan: str, size: str, runs: int, scratch: Path) -> str:
    """One size's table row: objects, then medians of gpufleet, Kapitan, Kapitan with fork."""
    policies = scratch / f"fleet-{size}" / "policies"
    generate(SIZES[size], 1, policies)
    compile_once(policies, scratch / f"out-{size}", [])
    project = scratch / f"kapitan-{size}"
    objects = kapitan_project(scratch / f"out-{size}", project)
    times: dict[str, list[float]] = {"gpufleet": [], "kapitan": [], "fork": []}
    for n in range(runs):
        times["gpufleet"].append(compile_once(policies, scratch / f"out-{size}-{n}", []).wall)
        for variant, options in (("kapitan", []), ("fork", ["--mp-method", "fork"])):
            compiled = scratch / f"compiled-{size}-{variant}-{n}"
            times[variant].append(kapitan_once(kapitan, project, compiled, options))
            if written(compiled) != objects:
                raise SystemExit(f"Kapitan wrote {written(compiled)} files, not {objects}")
        print(f"{size}: round {n + 1} of {runs} done", flush=True)
    gpufleet, default, fork = (statistics.median(times[k]) for k in ("gpufleet", "kapitan", "fork"))
    return f"| {size} | {objects} | {gpufleet:.2f} | {default:.2f} | {fork:.2f} |"


def main() -> None:
    """Measure the sizes asked for and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kapitan", required=True, help="the kapitan command to time")
    parser.add_argument("--sizes", nargs="+", default=["L"], choices=sorted(SIZES))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--scratch", type=Path, default=None)
    args = parser.parse_args()
    version = subprocess.run(
        [args.kapitan, "--version"], check=True, capture_output=True, text=True
    ).stdout.strip()
    with tempfile.TemporaryDirectory(dir=args.scratch) as directory:
        rows = [measure(args.kapitan, size, args.runs, Path(directory)) for size in args.sizes]
    print(
        f"\nKapitan {version}, {os.cpu_count()} CPUs, median of {args.runs} whole processes "
        "(seconds):\n\n| size | objects | gpufleet compile | Kapitan | Kapitan, "
        "--mp-method fork |\n| :-- | --: | --: | --: | --: |"
    )
    print("\n".join(rows))


if __name__ == "__main__":
    main()
