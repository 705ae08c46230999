"""Output is byte-identical for identical input, whatever the hash seed or the run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from compiler.load import loader
from compiler.pipeline import Compiled, compile_policies
from compiler.policy_files import PolicyEntry
from compiler.report.previous import read_previous_steering
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
    """Compiling over the committed out/ (its plans are the previous plans) changes nothing."""
    shutil.copytree(REPO / "out", tmp_path / "out")
    committed = {
        p.relative_to(tmp_path / "out").as_posix(): p.read_bytes()
        for p in sorted((tmp_path / "out").rglob("*"))
        if p.is_file()
    }
    assert compile_with_seed("1", tmp_path / "out") == committed


def test_policy_file_order_does_not_change_a_byte(
    monkeypatch: pytest.MonkeyPatch, compiled_example: Compiled
) -> None:
    """The loader is handed the files in reverse order; every output byte stays the same."""
    sorted_files = loader.scan_policy_files

    def reversed_files(root: Path) -> tuple[list[PolicyEntry], list[PolicyEntry]]:
        files, others = sorted_files(root)
        return files[::-1], others

    monkeypatch.setattr(loader, "scan_policy_files", reversed_files)
    files = sorted_files(EXAMPLE)[0]
    assert loader.scan_policy_files(EXAMPLE)[0] == files[::-1] != files
    reversed_tree = compile_policies(EXAMPLE, previous=read_previous_steering(REPO / "out")[0]).tree
    assert reversed_tree == compiled_example.tree
    assert list(reversed_tree) == list(compiled_example.tree)
