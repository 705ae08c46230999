"""Node-name formats are user text: a broken one is a diagnostic, never a crash (issue 17)."""

from __future__ import annotations

import os
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


def test_a_toleration_value_that_is_no_label_value_is_refused_at_load(
    policy_copy: Path, run_cli: Run
) -> None:
    grant = policy_copy / "grants" / "ml-research.yaml"
    grant.write_text(
        grant.read_text().replace("operator: Exists,", 'operator: Equal, value: "prüfung",')
    )
    out = ("--out", policy_copy.parent / "o")
    for command in (("check",), ("compile", *out)):
        code, _, err = run_cli(*command, "--policies", policy_copy)
        assert code == 2 and "GF107" in err and "tolerations" in err, err


def test_an_out_that_is_a_symlink_loop_is_gf121(
    policy_copy: Path, run_cli: Run, tmp_path: Path
) -> None:
    (tmp_path / "loop-a").symlink_to(tmp_path / "loop-b")
    (tmp_path / "loop-b").symlink_to(tmp_path / "loop-a")
    for command in ("compile", "diff"):
        code, _, err = run_cli(command, "--policies", policy_copy, "--out", tmp_path / "loop-a")
        assert code == 2 and "GF121" in err and "GF001" not in err, err


def test_a_dangling_link_or_a_pipe_among_the_policies_is_gf109_not_skipped(
    policy_copy: Path, run_cli: Run
) -> None:
    (policy_copy / "teams" / "gone.yaml").symlink_to(policy_copy / "teams" / "nowhere.yaml")
    os.mkfifo(policy_copy / "teams" / "pipe.yaml")  # reading it would block forever
    code, _, err = run_cli("check", "--policies", policy_copy)
    assert code == 2 and err.count("GF109") == 2, err
    assert "gone.yaml is not a regular file (a link to nothing)" in err
    assert "pipe.yaml is not a regular file (a pipe, socket or device)" in err
