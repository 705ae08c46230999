"""The policy trees the real-cluster suite compiles: the example fleet, and others it makes."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from compiler.ir import ResolvedCluster
from compiler.model.fleet import FleetSpec
from compiler.model.policy import PriorityLadder
from compiler.pipeline import check_policies

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "policies"
RETARGETED_CLUSTER = "prod-east"
RETARGETED_VERSION = "1.37"
"""The example cluster the suite also runs on the newest Kubernetes minor, declaring nothing:
prod-east has device taints, so its tree holds DeviceTaintRules."""


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


def retarget(policies: Path, into: Path, cluster: str, version: str) -> Path:
    """A copy of the policies in which `cluster` runs Kubernetes `version` and declares
    nothing beyond that release's defaults (its `apiServer` removed)."""
    shutil.copytree(policies, into)
    (path,) = [
        p
        for p in into.rglob("*.yaml")
        if re.search(rf"^kind: Cluster\n(.*\n)*?  name: {cluster}\n", p.read_text(), re.M)
    ]
    text = re.sub(
        r'kubernetesVersion: "[0-9.]+"', f'kubernetesVersion: "{version}"', path.read_text()
    )
    path.write_text(re.sub(r"  apiServer:.*\n(    .*\n)*", "", text))
    return into


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
