"""Fuzz the whole pipeline (the CI profile; `make fuzz` runs the long one, docs/fuzzing.md).

Each case mutates a valid fleet and runs `gpufleet compile --format json` on it, in a child
forked from this process, into an out/ holding the fleet's good output; harness.judge says
whether the run kept the contract. The CI profile runs CI_CASES cases of a fixed seed (the
same every run) and ROTATING_CASES of a seed that changes every day (new cases daily,
reproducible all day); a failure prints how to replay it.
"""

from __future__ import annotations

import json
import os
import random
import signal
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from compiler.write import OWNED_LIST
from tests.fuzz import campaign, runner
from tests.fuzz.harness import Outcome, judge, snapshot
from tests.fuzz.mutations import MUTATIONS, draw_case
from tests.fuzz.runner import Finished, Limits
from tests.fuzz.seeds import SMALL, example_tree, write_tree

CI_CASES = int(os.environ.get("GPUFLEET_FUZZ_CASES", "140"))
ROTATING_CASES = int(os.environ.get("GPUFLEET_FUZZ_ROTATING_CASES", "70"))
FIXED_SEED = "ci"
ROTATING_SEED = os.environ["GPUFLEET_FUZZ_SEED"]
"""Today's seed (UTC), or the one a failure named, to run its cases again (tests/conftest.py)."""
EXAMPLE = example_tree()


@pytest.fixture(scope="module")
def workspace() -> Iterator[campaign.Workspace]:
    """One scratch directory (tmpfs when there is one) for both seeds, so the fixed bases
    are compiled once."""
    with tempfile.TemporaryDirectory(prefix="gpufleet-fuzz-", dir=campaign.SCRATCH) as root:
        yield campaign.Workspace(Path(root))


@pytest.mark.parametrize(
    ("seed", "cases"), [(FIXED_SEED, CI_CASES), (ROTATING_SEED, ROTATING_CASES)]
)
def test_mutated_fleets_keep_the_contract(
    workspace: campaign.Workspace, seed: str, cases: int
) -> None:
    # the bases and the draw are `make fuzz`'s, so its line in a failure redraws the case
    config = campaign.Config(seed=seed, cases=cases, jobs=2)
    summary = campaign.run_campaign(config, workspace=workspace)
    assert summary.cases == cases and not summary.fuzzer_errors, summary.text()
    assert not summary.failures, summary.text()
    # the cases reach every stage: some compile, some are refused by the solver or a check
    assert summary.exits["0"] >= cases // 10, summary.text()
    assert summary.exits["1"] >= 1, summary.text()


def test_a_case_is_the_same_tree_on_every_draw() -> None:
    bases = {"small": SMALL, "example": EXAMPLE}
    for index in range(20):
        first = draw_case("s", index, bases, {})
        assert first == draw_case("s", index, bases, {})
    assert draw_case("s", 0, bases, {}).tree != draw_case("t", 0, bases, {}).tree


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_every_mutation_changes_a_valid_tree(name: str) -> None:
    rng = random.Random(name)
    changed = 0
    for attempt in range(6):
        tree = SMALL if attempt % 2 else EXAMPLE
        mutated = MUTATIONS[name](rng, dict(tree))
        if mutated is not None and mutated[0] != tree:
            changed += 1
            assert mutated[1], "a mutation describes itself"
    assert changed >= 4, f"{name} left the tree as it was"


def _finished(status: int = 0, **changes: object) -> Finished:
    values: dict[str, object] = {
        "status": status,
        "seconds": 0.1,
        "max_rss": 50 << 20,
        "rss_growth": 0,
        "timed_out": False,
        "stray": 0,
    }
    values.update(changes)
    return Finished(**values)  # type: ignore[arg-type]


OLD = {"a.yaml": b"kind: A\n", OWNED_LIST: b"# owned\na.yaml\n"}
NEW = {"a.yaml": "kind: B\n", "b.yaml": "kind: C\n"}
NEW_OUT = {
    "a.yaml": b"kind: B\n",
    "b.yaml": b"kind: C\n",
    OWNED_LIST: b"# owned\na.yaml\nb.yaml\n",
}
ERROR: dict[str, object] = {
    "code": "GF101",
    "severity": "error",
    "message": "bad",
    "location": {"file": "policies/a.yaml", "line": 3, "column": 5},
}


def _document(found: list[dict[str, object]], exit_code: int) -> str:
    """The --format json document of a run that found `found` and exited `exit_code`."""
    return json.dumps(
        {
            "schemaVersion": "gpufleet.dev/diagnostics/v1",
            "diagnostics": found,
            "suppressed": [],
            "summary": {"exitCode": exit_code},
        }
    )


def _outcome(
    finished: Finished,
    found: list[dict[str, object]] | None = None,
    stderr: str = "",
    after: dict[str, bytes] = OLD,
    **more: object,
) -> Outcome:
    said = "compiled c1: 0 nodes change MIG configuration\n" if finished.status == 0 else ""
    values: dict[str, object] = {
        "finished": finished,
        "stdout": _document(found or [], finished.status),
        "stderr": said + stderr,
        "policies_before": {"a.yaml": b"x"},
        "policies_after": {"a.yaml": b"x"},
        "old": OLD,
        "after": after,
        "new": NEW if finished.status == 0 else None,
    }
    values.update(more)
    return Outcome(**values)  # type: ignore[arg-type]


def _at(line: object = 3, code: str = "GF101") -> list[dict[str, object]]:
    return [
        {**ERROR, "code": code, "location": {"file": "policies/a.yaml", "line": line, "column": 5}}
    ]


def _kinds(outcome: Outcome) -> list[str]:
    return sorted({p.kind for p in judge(outcome, Limits()).problems})


def test_the_judge_accepts_what_keeps_the_contract() -> None:
    assert _kinds(_outcome(_finished(2), [ERROR])) == []
    assert _kinds(_outcome(_finished(0), after=NEW_OUT)) == []
    assert _kinds(_outcome(_finished(0), after=OLD)) == []


@pytest.mark.parametrize(
    ("outcome", "kind"),
    [
        (
            _outcome(_finished(3), [{"code": "GF001", "severity": "error", "message": "x"}]),
            "crash",
        ),
        (_outcome(_finished(-signal.SIGSEGV)), "crash"),
        (_outcome(_finished(2), [ERROR], "Traceback (most recent call last):\n"), "crash"),
        (_outcome(_finished(2), [ERROR], stdout="compiled"), "crash"),
        (_outcome(_finished(2), [ERROR], stdout=_document([ERROR], 1)), "exit"),
        (_outcome(_finished(2, timed_out=True)), "hang"),
        (_outcome(_finished(2, rss_growth=2 << 30), [ERROR]), "memory"),
        (_outcome(_finished(2, stray=1), [ERROR]), "stray"),
        (_outcome(_finished(2), _at(line=None)), "diagnostic"),
        (_outcome(_finished(2), _at(code="GF999")), "diagnostic"),
        (_outcome(_finished(1), [ERROR]), "exit"),
        (_outcome(_finished(2)), "exit"),
        (_outcome(_finished(0), [ERROR], after=NEW_OUT), "exit"),
        (_outcome(_finished(2), [ERROR], after=NEW_OUT), "out"),
        (_outcome(_finished(2), [ERROR], after={}), "out"),
        (_outcome(_finished(0), after={**NEW_OUT, "b.yaml": b"kind: "}), "out"),
        (_outcome(_finished(0), after={k: v for k, v in NEW_OUT.items() if k != "b.yaml"}), "out"),
        (_outcome(_finished(0), after={**NEW_OUT, OWNED_LIST: b"a.yaml\n"}), "out"),
        (_outcome(_finished(2), [ERROR], leftovers=(".out.staging",)), "out"),
        (_outcome(_finished(2), [ERROR], policies_after={}), "out"),
        (_outcome(_finished(0), after=NEW_OUT, new=None), "out"),
        (
            _outcome(
                _finished(0),
                after={**NEW_OUT, "b.yaml": b"a: [\n"},
                new={**NEW, "b.yaml": "a: [\n"},
            ),
            "emit",
        ),
    ],
)
def test_the_judge_catches_every_broken_promise(outcome: Outcome, kind: str) -> None:
    assert kind in _kinds(outcome)


def _sleep() -> int:
    time.sleep(60)
    return 0


def _leave_a_worker() -> int:
    if os.fork() == 0:
        time.sleep(60)
        os._exit(0)
    return 0


def _allocate() -> int:
    block = bytearray(8 << 30)
    return len(block) // 1


def test_a_child_that_hangs_is_killed_at_its_time_limit(tmp_path: Path) -> None:
    started = time.monotonic()
    finished = runner.run(_sleep, tmp_path, tmp_path / "o", tmp_path / "e", Limits(seconds=0.5))
    assert finished.timed_out
    assert finished.status == -signal.SIGKILL
    assert time.monotonic() - started < 10


def test_a_worker_that_outlives_its_child_is_found_and_killed(tmp_path: Path) -> None:
    limits = Limits(linger=0.2)
    finished = runner.run(_leave_a_worker, tmp_path, tmp_path / "o", tmp_path / "e", limits)
    assert finished.status == 0
    assert finished.stray == 1


def test_a_child_cannot_take_more_memory_than_its_cap(tmp_path: Path) -> None:
    limits = Limits(address_space_margin=1 << 30)
    finished = runner.run(_allocate, tmp_path, tmp_path / "o", tmp_path / "e", limits)
    assert finished.status == runner.RAISED
    assert "MemoryError" in (tmp_path / "e").read_text()


def test_a_saved_case_replays(tmp_path: Path) -> None:
    saved = tmp_path / "saved"
    write_tree(saved / "policies", {**SMALL, "teams/a.yaml": b"kind: [\n"})
    (saved / "out.before" / "plan").mkdir(parents=True)
    (saved / "out.before" / "plan" / "note.txt").write_text("an old tree\n")
    config = campaign.Config(seed="replay", cases=1)
    outcome = campaign.replay(saved, config)
    assert outcome.finished.status == 2
    assert outcome.after == snapshot(saved / "out.before")
    assert judge(outcome, config.limits).problems == []
