"""Determinism under hostile conditions: the same bytes whatever the locale, the hash seed,
the order files were created in, or the order of documents within a file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler.pipeline import compile_policies
from compiler.write import write_tree
from tests.conftest import EXAMPLE, REPO

LOCALES = [
    name
    for name in ("C", "POSIX", "C.UTF-8", "C.utf8", "en_US.UTF-8", "de_DE.ISO-8859-1")
    if subprocess.run(["locale", "-a"], capture_output=True, text=True, check=False)
    .stdout.split()
    .count(name)
    or name in ("C", "POSIX")
]


def unicode_policies(target: Path) -> Path:
    """The example with non-ASCII file names, directory names and descriptions."""
    root = target / "pölicies"
    shutil.copytree(EXAMPLE, root)
    (root / "teams" / "vision.yaml").rename(root / "teams" / "visión ü.yaml")
    fleet = root / "fleet.yaml"
    fleet.write_text(
        fleet.read_text().replace("Scheduled training runs.", "Entraînement planifié — 训练 🚀")
    )
    return root


def run(args: list[str], locale: str, seed: str) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "PYTHON"))}
    env.update(LC_ALL=locale, LANG=locale, PYTHONHASHSEED=seed)
    command = [sys.executable, "-m", "compiler", *args]
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, timeout=120)


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_locales_and_hash_seeds_do_not_change_a_byte(tmp_path: Path) -> None:
    assert len(LOCALES) >= 3, LOCALES
    policies = unicode_policies(tmp_path)
    reference = tmp_path / "reference"
    write_tree(reference, compile_policies(policies).tree)
    expected = files(reference)
    assert any("visi\\u00f3n \\u00fc.yaml" in t.decode() for t in expected.values())
    for index, locale in enumerate(LOCALES):
        out = tmp_path / f"out-{index}"
        done = run(["compile", "--policies", str(policies), "--out", str(out)], locale, str(index))
        assert done.returncode == 0, (locale, done.stderr)
        assert files(out) == expected, locale


def test_diagnostics_are_the_same_bytes_in_every_locale(tmp_path: Path) -> None:
    policies = unicode_policies(tmp_path)
    team = policies / "teams" / "visión ü.yaml"
    team.write_text(team.read_text().replace("kind: Team", "kind: Téam 🚀"))
    outputs = set()
    for index, locale in enumerate(LOCALES):
        done = run(["check", "--policies", str(policies)], locale, str(index))
        assert done.returncode == 2, (locale, done.stderr)
        assert b"Traceback" not in done.stderr
        outputs.add(done.stderr)
    (text,) = outputs  # the same bytes, whatever the locale
    assert "unknown kind 'Téam 🚀'".encode() in text


def documents_of(root: Path) -> tuple[list[str], list[str]]:
    """The example's documents as text: (teams, everything else)."""
    teams, others = [], []
    for path in sorted(root.rglob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            text = yaml.safe_dump(document, sort_keys=False)
            (teams if document["kind"] == "Team" else others).append(text)
    return teams, others


TEAMS, OTHERS = documents_of(EXAMPLE)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    teams=st.permutations(range(len(TEAMS))),
    others=st.permutations(range(len(OTHERS))),
    reverse=st.booleans(),
)
def test_document_and_file_order_do_not_change_a_byte(
    tmp_path_factory: pytest.TempPathFactory, teams: list[int], others: list[int], reverse: bool
) -> None:
    trees = []
    for team_order, other_order in ((range(len(TEAMS)), range(len(OTHERS))), (teams, others)):
        root = tmp_path_factory.mktemp("order") / "policies"
        root.mkdir()
        contents = {"fleet.yaml": "---\n".join(OTHERS[i] for i in other_order)}
        contents |= {f"team-{i}.yaml": TEAMS[i] for i in team_order}  # one team per file
        for name in sorted(contents, reverse=reverse):  # directory order follows creation
            (root / name).write_text(contents[name])
        trees.append(compile_policies(root).tree)
    assert trees[0] == trees[1]


def test_diagnostics_keep_their_order_whatever_the_file_order(
    tmp_path: Path, run_cli: Callable[..., tuple[int, str, str]]
) -> None:
    outputs = []
    for order in (1, -1):
        root = tmp_path / f"policies-{order}"
        shutil.copytree(EXAMPLE, root)
        for grant in sorted((root / "grants").iterdir())[::order]:
            text = grant.read_text().replace("tier: ", "tier: missing-")
            grant.unlink()
            grant.write_text(text)
        code, out, _ = run_cli("check", "--policies", root, "--format", "json")
        assert code == 1
        outputs.append(out.replace(str(root), "ROOT"))
    assert outputs[0] == outputs[1]
    quotas = sum(g.read_text().count("tier: ") for g in (EXAMPLE / "grants").iterdir())
    assert outputs[0].count('"code": "GF202"') == quotas  # one per granted tier
