"""The policy trees the real-cluster suite compiles: the example fleet, and others it makes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from compiler.model.fleet import FleetSpec
from compiler.model.policy import PriorityLadder
from compiler.pipeline import check_policies
from compiler.resolve import ResolvedCluster

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "policies"


def compile_tree(policies: Path, out: Path) -> None:
    """`gpufleet compile`, as a user runs it."""
    command = [sys.executable, "-m", "compiler", "compile"]
    done = subprocess.run(
        [*command, "--policies", str(policies), "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr


def resolved(policies: Path) -> tuple[dict[str, ResolvedCluster], PriorityLadder]:
    """The policy model of a tree: its clusters by name, and its ladder."""
    fleet, _ = check_policies(policies)
    assert fleet.ladder is not None
    return {c.name: c for c in fleet.clusters}, fleet.ladder


def gpu_runtime_classes(policies: Path) -> list[str]:
    """The runtime classes the fleet refuses in team namespaces (its default without a Fleet)."""
    fleet = check_policies(policies)[0].fleet
    spec = fleet.spec if fleet is not None else None
    default: list[str] = FleetSpec.model_fields["gpu_runtime_classes"].default
    return list(spec.gpu_runtime_classes) if spec is not None else default
