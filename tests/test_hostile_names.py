"""Node-name formats are user text: a broken one is a diagnostic, never a crash (issue 17)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests import fleets
from tests.conftest import PolicyWriter

Run = Callable[..., tuple[int, str, str]]


@pytest.mark.parametrize("pattern", ["n-{index}}", "n-{{index}", "n-{index}-{", "n-}{index}"])
def test_a_node_name_format_with_stray_braces_is_gf216(
    write_policies: PolicyWriter, run_cli: Run, pattern: str
) -> None:
    pools = (
        "\n    - {name: l40s, nodes: 2, gpu: L40S, gpusPerNode: 4, hostMemory: 512Gi, cpu: 64,"
        f" nodeNames: '{pattern}', topology: {{numaNode: 2, pcieRoot: 2}}}}\n"
    )
    root = write_policies(
        {
            "c.yaml": fleets.cluster(pools=pools),
            "t.yaml": fleets.tier("gpu", "{select: {models: [L40S]}}"),
            "team.yaml": fleets.team("a", "[{tier: gpu, guaranteed: 1}]"),
        }
    )
    code, _, err = run_cli("check", "--policies", root)
    assert code == 1 and "GF216" in err and "GF001" not in err, err


@pytest.mark.parametrize("inside", [".", "out", "teams/out"])
def test_out_inside_the_policies_is_a_usage_error(
    policy_copy: Path, run_cli: Run, inside: str
) -> None:
    before = sorted(p.relative_to(policy_copy) for p in policy_copy.rglob("*"))
    code, _, err = run_cli("compile", "--policies", policy_copy, "--out", policy_copy / inside)
    assert code == 2 and "GF113" in err and "inside --policies" in err, err
    assert sorted(p.relative_to(policy_copy) for p in policy_copy.rglob("*")) == before
