"""out/ ownership: gpufleet prunes and overwrites only what it wrote; everything else is kept."""

from __future__ import annotations

from pathlib import Path

from compiler.write import OWNED_LIST, owned_files
from tests.conftest import EXAMPLE
from tests.test_cli import Run, snapshot_tree

QUOTA = "clusters/prod-east/ml-research/resourcequota_gpufleet-devices.yaml"


def test_a_hand_made_file_where_gpufleet_writes_is_never_overwritten(
    run_cli: Run, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    assert run_cli("compile", "--policies", EXAMPLE, "--out", out)[0] == 0
    listing = out / OWNED_LIST
    listing.write_text(listing.read_text().replace(f"{QUOTA}\n", ""))
    (out / QUOTA).write_text("# mine\n")
    before = snapshot_tree(out)
    code, _, err = run_cli("compile", "--policies", EXAMPLE, "--out", out)
    assert code == 1 and f"error[GF503]: {out / QUOTA} is not gpufleet's" in err
    assert snapshot_tree(out) == before
    code, _, err = run_cli("compile", "--check", "--policies", EXAMPLE, "--out", out)
    assert code == 1 and "GF503" in err and "GF501" in err


def test_a_file_that_already_holds_what_gpufleet_writes_is_adopted(
    run_cli: Run, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    run_cli("compile", "--policies", EXAMPLE, "--out", out)
    (out / OWNED_LIST).unlink()
    code, _, err = run_cli("compile", "--policies", EXAMPLE, "--out", out)
    assert code == 0, err
    assert QUOTA in owned_files(out) and "not gpufleet's" not in err


def test_an_output_path_that_is_a_file_is_refused(run_cli: Run, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.write_text("not a directory\n")
    code, _, err = run_cli("compile", "--policies", EXAMPLE, "--out", out)
    assert code == 2 and "error[GF502]" in err and "not a directory" in err
    assert out.read_text() == "not a directory\n"


def test_check_and_diff_report_files_gpufleet_does_not_own(run_cli: Run, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run_cli("compile", "--policies", EXAMPLE, "--out", out)
    (out / "NOTES.md").write_text("mine\n")
    code, _, err = run_cli("compile", "--check", "--policies", EXAMPLE, "--out", out)
    assert code == 0 and f"note: {out / 'NOTES.md'} is not gpufleet's" in err
    code, stdout, err = run_cli("diff", "--policies", EXAMPLE, "--out", out)
    assert code == 0 and "up to date" in stdout and "NOTES.md" in err


def test_provenance_names_file_and_clause_never_a_line(run_cli: Run, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run_cli("compile", "--policies", EXAMPLE, "--out", out)
    sources = [
        line.split(": ", 1)[1]
        for path in out.rglob("*.yaml")
        for line in path.read_text().splitlines()
        if line.strip().startswith("gpufleet.dev/source:")
    ]
    assert len(sources) > 40
    for annotation in sources:  # objects built from several clauses list each, comma-separated
        for source in annotation.strip('"').split(", "):
            file, clause = source.split("#")
            assert file.startswith("policies/") and file.endswith(".yaml") and clause, source
            assert not any(part.isdigit() for part in file.replace(".", ":").split(":")), source
