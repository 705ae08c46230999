"""Output is byte-identical for identical input, whatever the hash seed or the run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import EXAMPLE, REPO


def compile_with_seed(seed: str, out: Path) -> dict[str, bytes]:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    subprocess.run(
        [
            sys.executable,
            "-m",
            "compiler",
            "compile",
            "--policies",
            str(EXAMPLE),
            "--out",
            str(out),
        ],
        cwd=REPO,
        env=env,
        check=True,
        capture_output=True,
    )
    return {
        p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()
    }


def test_hash_seed_does_not_change_a_byte(tmp_path: Path) -> None:
    first = compile_with_seed("0", tmp_path / "a")
    second = compile_with_seed("12345", tmp_path / "b")
    assert first == second
    assert len(first) > 50


def test_committed_out_is_what_the_example_compiles_to(tmp_path: Path) -> None:
    fresh = compile_with_seed("1", tmp_path / "out")
    committed = {
        p.relative_to(REPO / "out").as_posix(): p.read_bytes()
        for p in sorted((REPO / "out").rglob("*"))
        if p.is_file()
    }
    assert fresh == committed
