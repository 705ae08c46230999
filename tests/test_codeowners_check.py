"""Ownership made reviewable: CODEOWNERS routes each policy file to the owners the policy
declares, `gpufleet codeowners` writes that, and `check` fails (GF229) when it disagrees."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from benchmarks.generate import Size, generate
from compiler.codeowners import BEGIN, END, owners_of, parse
from tests import fleets
from tests.compile_imports import imported_by_compile
from tests.conftest import EXAMPLE, PolicyWriter

Run = Callable[..., tuple[int, str, str]]
POOLS = """
    - {name: l40s, nodes: 2, gpu: L40S, gpusPerNode: 4, hostMemory: 512Gi, cpu: 64}
"""
FLEET = (
    fleets.HEADER
    + """kind: Fleet
metadata: {name: f}
spec:
  gitops: {repoURL: "https://git.example.com/x.git"}
  owners: ["@acme/gpu-platform"]
"""
)


def _grant(team: str, owners: str) -> str:
    return fleets.HEADER + (
        f"kind: TeamGrant\nmetadata: {{name: {team}}}\n"
        f"spec: {{namespaces: [{team}], owners: {owners}, priorities: [low],\n"
        "  quotas: [{tier: gpu, guaranteed: 2}]}\n"
    )


def _team(team: str) -> str:
    return (
        fleets.HEADER + f"kind: Team\nmetadata: {{name: {team}}}\nspec: {{memoryQoS: burstable}}\n"
    )


def fleet(write: PolicyWriter) -> Path:
    return write(
        {
            "fleet.yaml": FLEET + "---\n" + fleets.LADDER,
            "clusters/c1.yaml": fleets.cluster(pools=POOLS),
            "tiers/gpu.yaml": fleets.tier("gpu", "{select: {models: [L40S]}}"),
            "grants/ds.yaml": _grant("ds", '["@acme/data-science"]'),
            "grants/ops.yaml": _grant("ops", "[]"),
            "teams/ds.yaml": _team("ds"),
            "teams/ops.yaml": _team("ops"),
        },
        migrate=False,
    )


def test_codeowners_routes_each_file_to_its_owner(
    write_policies: PolicyWriter, run_cli: Run
) -> None:
    root = fleet(write_policies)
    code, _, err = run_cli("codeowners", "--policies", root)
    assert code == 0, err
    rules = parse((root.parent / ".github/CODEOWNERS").read_text())

    def owners(path: str) -> tuple[str, ...]:
        rule = owners_of(rules, path)
        return rule.owners if rule else ()

    platform = ("@acme/gpu-platform",)
    assert owners("policies/fleet.yaml") == platform
    assert owners("policies/grants/ds.yaml") == platform
    assert owners("policies/clusters/c1.yaml") == platform
    assert owners(".github/CODEOWNERS") == platform
    assert owners("policies/teams/ds.yaml") == ("@acme/data-science",)
    assert owners("policies/teams/ops.yaml") == platform  # its grant names no owners
    assert run_cli("check", "--policies", root)[0] == 0


def test_check_fails_when_codeowners_is_missing(write_policies: PolicyWriter, run_cli: Run) -> None:
    root = fleet(write_policies)
    code, _, err = run_cli("check", "--policies", root)
    assert code == 1 and "GF229" in err and "no CODEOWNERS file" in err


def test_a_hand_written_line_that_reroutes_a_grant_fails_check(
    write_policies: PolicyWriter, run_cli: Run
) -> None:
    root = fleet(write_policies)
    run_cli("codeowners", "--policies", root)
    codeowners = root.parent / ".github/CODEOWNERS"
    codeowners.write_text(codeowners.read_text() + "/policies/grants/ds.yaml @acme/data-science\n")
    code, _, err = run_cli("check", "--policies", root)
    assert code == 1
    assert "GF229" in err and "policies/grants/ds.yaml to @acme/data-science" in err
    assert run_cli("codeowners", "--check", "--policies", root)[0] == 1
    # Rewriting the block does not remove the overriding line: the user must.
    run_cli("codeowners", "--policies", root)
    assert run_cli("check", "--policies", root)[0] == 1


def test_an_edited_block_is_rewritten(write_policies: PolicyWriter, run_cli: Run) -> None:
    root = fleet(write_policies)
    codeowners = root.parent / ".github/CODEOWNERS"
    codeowners.parent.mkdir()
    codeowners.write_text("* @acme/everyone\n")
    run_cli("codeowners", "--policies", root)
    text = codeowners.read_text()
    assert text.startswith("* @acme/everyone\n")
    codeowners.write_text(text.replace("@acme/data-science", "@acme/intruders"))
    assert run_cli("check", "--policies", root)[0] == 1
    run_cli("codeowners", "--policies", root)
    assert codeowners.read_text() == text
    assert run_cli("check", "--policies", root)[0] == 0


def test_without_declared_owners_nothing_is_checked(
    write_policies: PolicyWriter, run_cli: Run
) -> None:
    root = fleet(write_policies)
    (root / "fleet.yaml").write_text(
        (root / "fleet.yaml").read_text().replace('  owners: ["@acme/gpu-platform"]\n', "")
    )
    assert run_cli("check", "--policies", root)[0] == 0
    code, _, err = run_cli("codeowners", "--policies", root)
    assert code == 1 and "GF229" in err


def test_a_broken_codeowners_file_is_a_diagnostic_not_a_crash(
    write_policies: PolicyWriter, run_cli: Run
) -> None:
    root = fleet(write_policies)
    codeowners = root.parent / ".github/CODEOWNERS"
    codeowners.parent.mkdir()
    for content in (
        f"{BEGIN}\n/a @b\n".encode(),  # a block never closed
        f"{BEGIN}\n{END}\n{BEGIN}\n{END}\n".encode(),  # two blocks
        "/a @\xe9quipe\n".encode("latin-1"),  # not UTF-8
    ):
        codeowners.write_bytes(content)
        code, _, err = run_cli("codeowners", "--policies", root)
        assert code == 1 and "GF229" in err and "Traceback" not in err, err
    codeowners.unlink()
    codeowners.mkdir()  # a directory where the file should be
    for command in ("codeowners", "check"):
        code, _, err = run_cli(command, "--policies", root)
        assert code == 1 and "GF229" in err and "GF001" not in err, err


def test_an_edited_line_inside_the_block_says_to_rewrite_it(
    write_policies: PolicyWriter, run_cli: Run
) -> None:
    root = fleet(write_policies)
    run_cli("codeowners", "--policies", root)
    codeowners = root.parent / ".github/CODEOWNERS"
    codeowners.write_text(codeowners.read_text().replace("@acme/data-science", "@acme/x"))
    code, _, err = run_cli("check", "--policies", root)
    assert code == 1 and "run `gpufleet codeowners`" in err and "overrides" not in err


def test_only_a_fleet_that_declares_owners_imports_pathspec(tmp_path: Path) -> None:
    """pathspec (CODEOWNERS' patterns) is imported at the first pattern: a compile of a fleet
    that declares no owners never imports it, one of the example fleet (which does) does."""
    policies = tmp_path / "policies"
    generate(Size(2, 4, 2, 2, 0.3, 0.0), 1, policies)
    assert imported_by_compile(policies, tmp_path / "out", ("pathspec",)) == set()
    found = imported_by_compile(EXAMPLE, tmp_path / "example-out", ("pathspec",))
    assert found == {"pathspec"}
