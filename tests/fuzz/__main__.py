"""The long fuzz profile and replays (docs/fuzzing.md).

    python -m tests.fuzz run --cases 10000 --seed 2024-06-01     # `make fuzz`
    python -m tests.fuzz replay /tmp/gpufleet-fuzz/<seed>-<time>/<seed>-000042

`run` exits 1 if any case broke the contract, `replay` if the saved case still does.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from pathlib import Path

from tests.fuzz import campaign
from tests.fuzz.harness import judge
from tests.fuzz.runner import Limits
from tests.fuzz.summary import Summary


def _limits(args: argparse.Namespace) -> Limits:
    return Limits(seconds=args.timeout, memory=args.memory << 20)


def _run(args: argparse.Namespace) -> int:
    config = campaign.Config(
        seed=args.seed,
        cases=args.cases,
        first=args.first,
        jobs=args.jobs,
        limits=_limits(args),
        exec_mode=args.exec,
        save=args.save or campaign.default_save(args.seed),
    )
    last = [time.monotonic()]

    def progress(summary: Summary) -> None:
        if time.monotonic() - last[0] >= args.every or summary.cases == config.cases:
            print(f"fuzz: {summary.line()}", file=sys.stderr, flush=True)
            last[0] = time.monotonic()

    summary = campaign.run_campaign(config, progress)
    print(summary.text())
    assert config.save is not None
    config.save.mkdir(parents=True, exist_ok=True)
    (config.save / "summary.json").write_text(json.dumps(summary.as_json(), indent=2) + "\n")
    print(f"summary: {config.save / 'summary.json'}")
    return 1 if summary.failures or summary.fuzzer_errors else 0


def _replay(args: argparse.Namespace) -> int:
    record = json.loads((args.directory / "case.json").read_text(encoding="utf-8"))
    config = campaign.Config(record["seed"], 1, limits=_limits(args), exec_mode=args.exec)
    outcome = campaign.replay(args.directory, config)
    verdict = judge(outcome, config.limits)
    finished = outcome.finished
    print(
        f"exit {finished.status} in {finished.seconds:.2f} s, max RSS {finished.max_rss >> 20} MiB"
    )
    sys.stdout.write(outcome.stderr)
    for problem in verdict.problems:
        print(f"PROBLEM {problem}")
    print("fails the contract" if verdict.problems else "keeps the contract")
    return 1 if verdict.problems else 0


def main(argv: list[str] | None = None) -> int:
    """Run the long profile or replay a saved case."""
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run a campaign and print its summary")
    run.add_argument("--cases", type=int, default=10_000)
    today = datetime.datetime.now(datetime.UTC).date().isoformat()
    run.add_argument("--seed", default=today, help="default: today (UTC)")
    run.add_argument("--first", type=int, default=0, help="index of the first case")
    run.add_argument("--jobs", type=int, default=1, help="cases at once (default 1)")
    run.add_argument("--save", type=Path, default=None, help="where failing cases go")
    replay = commands.add_parser("replay", help="run a saved case again and judge it")
    replay.add_argument("directory", type=Path)
    for sub in (run, replay):
        sub.add_argument("--timeout", type=float, default=60.0, help="seconds per case")
        sub.add_argument("--memory", type=int, default=1024, help="MiB of growth per case")
        sub.add_argument("--exec", action="store_true", help="run the gpufleet script per case")
    run.add_argument("--every", type=float, default=30.0, help="seconds between progress lines")
    args = parser.parse_args(argv)
    return _run(args) if args.command == "run" else _replay(args)


if __name__ == "__main__":
    raise SystemExit(main())
