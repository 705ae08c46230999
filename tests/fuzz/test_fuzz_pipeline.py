"""Fuzz the whole pipeline: every mutated policy tree ends in exit 0, 1 or 2 with located
diagnostics, never a traceback, an internal error or a solver timeout.

The default run draws FUZZ_EXAMPLES trees; GPUFLEET_FUZZ_EXAMPLES=5000 runs a campaign.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings

from tests.fuzz.harness import check_contract, run_compile
from tests.fuzz.mutations import hostile_trees
from tests.fuzz.seeds import SMALL, PolicyTree, example_tree

FUZZ_EXAMPLES = int(os.environ.get("GPUFLEET_FUZZ_EXAMPLES", "150"))


def test_the_seeds_compile() -> None:
    for tree in (SMALL, example_tree()):
        outcome = run_compile(tree)
        check_contract(outcome)
        assert outcome.code == 0, outcome.diagnostics


@settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(hostile_trees())
def test_hostile_policy_trees_end_in_a_located_diagnostic(tree: PolicyTree) -> None:
    check_contract(run_compile(tree))
