"""The command line: exit codes, diagnostics with file:line:column, atomic output."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.conftest import EXAMPLE, REPO

Run = Callable[..., tuple[int, str, str]]


def snapshot_tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_check_passes_on_the_example(run_cli: Run) -> None:
    code, out, err = run_cli("check", "--policies", EXAMPLE)
    assert code == 0, err
    assert out.startswith("ok: 2 clusters")


def test_the_committed_out_is_up_to_date(run_cli: Run) -> None:
    """out/ is the snapshot of the example fleet: what CI runs on a pull request, `compile
    --check` over the committed out/, fails on any byte an emitter changes."""
    code, stdout, err = run_cli("compile", "--check", "--policies", EXAMPLE, "--out", REPO / "out")
    assert code == 0, err
    assert "up to date" in stdout


def test_compile_writes_then_check_is_clean(run_cli: Run, tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, stdout, err = run_cli("compile", "--policies", EXAMPLE, "--out", out)
    assert code == 0, err
    assert (out / "clusters/prod-east/kustomization.yaml").is_file()
    assert (out / "plan/prod-west.json").is_file()
    code, stdout, _ = run_cli("compile", "--check", "--policies", EXAMPLE, "--out", out)
    assert code == 0 and "up to date" in stdout


def test_compile_check_lists_stale_files(run_cli: Run, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run_cli("compile", "--policies", EXAMPLE, "--out", out)
    (out / "clusters/prod-east/_cluster/priorityclass_batch.yaml").write_text("edited\n")
    (out / "plan/prod-east.json").unlink()
    code, _, err = run_cli("compile", "--check", "--policies", EXAMPLE, "--out", out)
    assert code == 1
    assert "GF501" in err
    assert "changed: clusters/prod-east/_cluster/priorityclass_batch.yaml" in err
    assert "added: plan/prod-east.json" in err


def test_over_committed_fleet_exits_1_naming_the_teams(
    run_cli: Run, policy_copy: Path, tmp_path: Path
) -> None:
    grant = policy_copy / "grants" / "ml-research.yaml"
    grant.write_text(grant.read_text().replace("guaranteed: 64", "guaranteed: 88"))
    out = tmp_path / "out"
    code, _, err = run_cli("check", "--policies", policy_copy)
    assert code == 1
    assert "error[GF401]: cluster prod-west: tier training" in err
    assert "shortfall 8" in err
    assert "team ml-research guarantees 88 x training" in err
    assert "team vision guarantees 16 x training" in err
    assert "grants/ml-research.yaml:13:36" in err  # the guarantee, in the grant
    assert "Traceback" not in err
    assert not out.exists()


def test_failed_compile_leaves_previous_output_untouched(
    run_cli: Run, policy_copy: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    assert run_cli("compile", "--policies", policy_copy, "--out", out)[0] == 0
    before = snapshot_tree(out)
    grant = policy_copy / "grants" / "vision.yaml"
    grant.write_text(grant.read_text().replace("guaranteed: 16", "guaranteed: 1600"))
    assert run_cli("compile", "--policies", policy_copy, "--out", out)[0] == 1
    assert snapshot_tree(out) == before


def test_hand_made_files_survive_and_owned_files_are_pruned(
    run_cli: Run, policy_copy: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    run_cli("compile", "--policies", policy_copy, "--out", out)
    (out / "clusters" / "prod-east" / "README.md").write_text("mine\n")
    (policy_copy / "teams" / "vision.yaml").unlink()
    (policy_copy / "grants" / "vision.yaml").unlink()  # the platform offboards the team
    code, _, err = run_cli("compile", "--policies", policy_copy, "--out", out)
    assert code == 0, err
    assert (out / "clusters" / "prod-east" / "README.md").read_text() == "mine\n"
    assert "README.md is not gpufleet's" in err
    assert not (out / "clusters" / "prod-west" / "vision").exists()


def test_malformed_inputs_exit_2_with_location_and_no_traceback(
    run_cli: Run, policy_copy: Path
) -> None:
    cluster = policy_copy / "clusters" / "prod-east.yaml"
    original = cluster.read_text()
    cases = {
        "malformed": (original.replace("nodePools:", "nodePools: [", 1), "GF101"),
        "unknown field": (original.replace("gpusPerNode: 8", "gpusPerNod: 8", 1), "GF106"),
        "wrong type": (original.replace("nodes: 16", "nodes: many", 1), "GF107"),
        "duplicate key": (
            original.replace("      nodes: 16", "      nodes: 16\n      nodes: 8", 1),
            "GF102",
        ),
    }
    for name, (text, expected) in cases.items():
        cluster.write_text(text)
        code, _, err = run_cli("check", "--policies", policy_copy)
        assert code == 2, name
        assert f"error[{expected}]" in err, name
        assert "prod-east.yaml:" in err and " | " in err and "^" in err, name
        assert "Traceback" not in err, name
    cluster.write_text(original)


def test_usage_errors_exit_2(run_cli: Run) -> None:
    assert run_cli("frobnicate")[0] == 2
    code, _, err = run_cli("compile", "--solver-time-limit", "soon")
    assert code == 2 and "GF113" in err


def test_github_format_annotates_file_and_line(run_cli: Run, policy_copy: Path) -> None:
    grant = policy_copy / "grants" / "vision.yaml"
    grant.write_text(grant.read_text().replace("tier: general", "tier: generl"))
    code, _, err = run_cli("check", "--policies", policy_copy, "--format", "github")
    assert code == 1
    errors = [line for line in err.splitlines() if line.startswith("::error file=")]
    assert "grants/vision.yaml,line=14,col=" in errors[0] and "GF202" in errors[0]


def test_explain_prints_capacity_per_tier_and_pool(run_cli: Run, tmp_path: Path) -> None:
    code, out, err = run_cli("explain", "--policies", EXAMPLE, "--out", tmp_path / "out")
    assert code == 0, err
    assert "pool h100: 16 nodes x 8 H100-80GB (4 x all-2x3g.40gb, 12 x all-disabled)" in out
    assert "tier inference: capacity 64, guaranteed 52, limit 72, headroom 12 (19%)" in out
    assert "b200/gpu" in out and "(ml-research/ml-research 64, vision/vision 16)" in out


def test_explain_on_an_infeasible_fleet_says_why(run_cli: Run, policy_copy: Path) -> None:
    grant = policy_copy / "grants" / "vision.yaml"
    text = grant.read_text().replace("guaranteed: 16", "guaranteed: 40")
    grant.write_text(text.replace("limit: 32", "limit: 40"))
    code, _, err = run_cli("explain", "--policies", policy_copy, "--out", policy_copy / "no-out")
    assert code == 1 and "GF401" in err and "or add 2 nodes to pool b200" in err


def test_the_command_exits_with_mains_code_and_all_its_output(tmp_path: Path) -> None:
    """`python -m compiler` (and the `gpufleet` script): nothing printed is lost, the exit
    code is main's, and a reader that goes away ends the process with SIGPIPE, never with a
    traceback or an internal error."""
    command = [sys.executable, "-m", "compiler"]
    done = subprocess.run(
        [*command, "compile", "--policies", str(EXAMPLE), "--out", str(tmp_path / "out")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and done.stdout.startswith("compiled prod-east")
    assert done.stderr.count("warning[GF600]") == 1
    # prod-west (1.34) serves no MutatingAdmissionPolicy: no default priority, no GPU toleration
    assert done.stderr.count("warning[GF603]") == 2
    usage = subprocess.run(
        [*command, "compile", "--no-such-option"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert usage.returncode == 2 and "GF113" in usage.stderr
    reader, writer = os.pipe()
    os.close(reader)  # nobody reads what render prints
    with os.fdopen(writer, "wb") as gone:
        render = [*command, "render", "--policies", str(EXAMPLE), "--cluster", "prod-east"]
        cut = subprocess.run(render, cwd=REPO, stdout=gone, stderr=subprocess.PIPE, timeout=60)
    assert cut.returncode == -signal.SIGPIPE
    assert b"Traceback" not in cut.stderr and b"GF001" not in cut.stderr
