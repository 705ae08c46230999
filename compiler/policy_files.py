"""Which files below the policy directory are policy: the loader reads them, the compile
cache hashes them and CODEOWNERS routes them (a leaf, so that hashing them loads no parser)."""

from __future__ import annotations

from pathlib import Path

POLICY_SUFFIXES = (".yaml", ".yml")
"""What a policy file's name ends with; anything else below the policy directory is not read."""


def policy_files(root: Path) -> list[Path]:
    """Every `*.yaml` / `*.yml` file below `root`, in a stable order."""
    found = [p for p in root.rglob("*") if p.suffix in POLICY_SUFFIXES and p.is_file()]
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())
