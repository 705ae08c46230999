"""A real control plane per emitted cluster tree, and applying the tree to it as Argo CD does.

kube-local (scripts/kubelocal) builds and starts etcd, kube-apiserver and
kube-controller-manager of the cluster's Kubernetes version with exactly the feature gates and
runtime config the Cluster declares. The tree is server-side applied one Argo CD sync wave at
a time, after the CRDs of the third-party kinds it holds (Kueue's, vendored in
compiler/schemas/kueue).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import kubelocal
import yaml

from compiler.emit.manifest import SYNC_WAVE
from compiler.ir import TEAM_LABEL, ResolvedCluster
from compiler.model.fleet import FleetSpec
from tests.e2e.admission_table import GPU_RUNTIME_CLASS
from tests.e2e.policies import REPO

KUEUE_CRDS = REPO / "compiler" / "schemas" / "kueue"
FIELD_MANAGER = "gpufleet-e2e"
DEFAULT_TEAM_ROLE: str = FleetSpec.model_fields["team_role"].default


class Cluster:
    """A running control plane with one emitted cluster tree applied."""

    def __init__(self, plane: kubelocal.ControlPlane, tree: Path) -> None:
        self.plane = plane
        self.tree = tree

    def kubectl(
        self, *args: str, team: str | None = None, input: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """kubectl as the admin, or as `team`'s user; never raises on a non-zero exit."""
        context = self.plane.team_context(team) if team else None
        return self.plane.kubectl(*args, context=context, check=False, input=input)

    def get(self, *args: str) -> Any:
        """`kubectl get ... -o json` as the admin, parsed."""
        done = self.kubectl("get", *args, "-o", "json")
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def create(
        self, manifest: dict[str, Any], team: str | None, dry_run: bool = False
    ) -> subprocess.CompletedProcess[str]:
        """Create one object as `team`'s user, or as the admin (`dry_run`: through the whole
        admission chain, persisting nothing); stdout holds the admitted object as JSON."""
        args = ["create", "-f", "-", "-o", "json"]
        if dry_run:
            args.append("--dry-run=server")
        return self.kubectl(*args, team=team, input=json.dumps(manifest))

    def stored(self) -> dict[str, str]:
        """kind/namespace/name -> every object of the tree as stored, less what controllers
        write (status, resourceVersion, managedFields), as canonical JSON."""
        args = [arg for path in manifest_paths(self.tree) for arg in ("-f", str(path))]
        found = {}
        for obj in self.get(*args)["items"]:
            meta = obj["metadata"]
            key = f"{obj['kind']}/{meta.get('namespace', '')}/{meta['name']}"
            obj.pop("status", None)
            for written in ("resourceVersion", "managedFields"):
                meta.pop(written, None)
            found[key] = json.dumps(obj, sort_keys=True)
        return found


def manifest_paths(tree: Path) -> list[Path]:
    """The files the cluster's kustomization.yaml lists, in its order."""
    kustomization = yaml.safe_load((tree / "kustomization.yaml").read_text())
    return [tree / name for name in kustomization["resources"]]


def sync_waves(tree: Path) -> list[tuple[int, list[Path]]]:
    """The tree's files by Argo CD sync wave, lowest first."""
    waves: dict[int, list[Path]] = defaultdict(list)
    for path in manifest_paths(tree):
        obj = yaml.safe_load(path.read_text())
        waves[int(obj["metadata"].get("annotations", {}).get(SYNC_WAVE, "0"))].append(path)
    return sorted(waves.items())


def apply(cluster: Cluster, paths: list[Path]) -> subprocess.CompletedProcess[str]:
    """Server-side apply of `paths` as the admin, with gpufleet's field manager."""
    args = ["apply", "--server-side", f"--field-manager={FIELD_MANAGER}"]
    for path in paths:
        args += ["-f", str(path)]
    return cluster.kubectl(*args)


def apply_in_waves(cluster: Cluster, kueue_crds: bool = True) -> list[str]:
    """Apply the whole tree one sync wave at a time, as Argo CD does; every line the server
    or kubectl printed on stderr (warnings), which a clean tree leaves empty. `kueue_crds`:
    install Kueue's API first when the tree has Kueue objects (not once a real Kueue
    installed its own)."""
    if kueue_crds and any(
        p.name.startswith(("clusterqueue_", "localqueue_")) for p in manifest_paths(cluster.tree)
    ):
        install_kueue_crds(cluster)
    printed: list[str] = []
    for wave, paths in sync_waves(cluster.tree):
        done = apply(cluster, paths)
        assert done.returncode == 0, f"wave {wave}: {done.stderr}"
        printed += [line for line in done.stderr.splitlines() if line.strip()]
        if any(p.name.startswith("namespace_") for p in paths):
            wait_for_default_service_accounts(cluster)
    return printed


def install_kueue_crds(cluster: Cluster) -> None:
    """Kueue's CRDs (no manager: only the API), established before anything uses them."""
    crds = sorted(KUEUE_CRDS.glob("kueue.x-k8s.io_*.yaml"))
    done = apply(cluster, crds)
    assert done.returncode == 0, done.stderr
    done = cluster.kubectl(
        "wait",
        "--for=condition=Established",
        "--timeout=60s",
        *(f"crd/{yaml.safe_load(p.read_text())['metadata']['name']}" for p in crds),
    )
    assert done.returncode == 0, done.stderr


def wait_for_default_service_accounts(cluster: Cluster, timeout: float = 60) -> None:
    """Pods are refused until the controller manager made each namespace's `default`
    ServiceAccount."""
    namespaces = [
        yaml.safe_load(p.read_text())["metadata"]["name"]
        for p in manifest_paths(cluster.tree)
        if p.name.startswith("namespace_")
    ]
    deadline = time.monotonic() + timeout
    for namespace in namespaces:
        while cluster.kubectl("get", "serviceaccount", "default", "-n", namespace).returncode:
            assert time.monotonic() < deadline, f"no default ServiceAccount in {namespace}"
            time.sleep(0.2)


def emitted_groups(tree: Path) -> dict[str, str]:
    """team -> the group gpufleet's RoleBindings give the team's namespaces in this tree."""
    groups = {}
    for path in manifest_paths(tree):
        if path.name.startswith("rolebinding_"):
            binding = yaml.safe_load(path.read_text())
            (subject,) = binding["subjects"]
            groups[binding["metadata"]["labels"][TEAM_LABEL]] = subject["name"]
    return groups


def bind_teams(cluster: Cluster, resolved: ResolvedCluster) -> None:
    """A team the fleet declares no group for gets no RoleBinding from gpufleet: for the
    admission table to act as it, the harness binds its kube-local group to the built-in
    `edit` role in its namespaces, as the fleet's `teamRole` default would."""
    plane = cluster.plane
    declared = emitted_groups(cluster.tree)
    for team in resolved.teams:
        if team.name in declared:
            continue
        group = plane.team(team.name).group
        for namespace in team.spec.namespaces:
            binding = {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": {"name": f"e2e-team-{team.name}", "namespace": namespace},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": DEFAULT_TEAM_ROLE,
                },
                "subjects": [
                    {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}
                ],
            }
            done = cluster.kubectl("apply", "-f", "-", input=json.dumps(binding))
            assert done.returncode == 0, done.stderr


def install_gpu_runtime_class(cluster: Cluster) -> None:
    """The RuntimeClass the NVIDIA GPU operator installs, so that a pod naming it meets
    gpufleet's guardrail rather than the RuntimeClass plugin's "not found"."""
    runtime = {
        "apiVersion": "node.k8s.io/v1",
        "kind": "RuntimeClass",
        "metadata": {"name": GPU_RUNTIME_CLASS},
        "handler": GPU_RUNTIME_CLASS,
    }
    done = cluster.kubectl("apply", "-f", "-", input=json.dumps(runtime))
    assert done.returncode == 0, done.stderr


def wait_for_type_checking(cluster: Cluster, timeout: float = 60) -> dict[str, Any]:
    """name -> status of every ValidatingAdmissionPolicy, once the server's type checker has
    looked at its current generation."""
    deadline = time.monotonic() + timeout
    while True:
        policies = cluster.get("validatingadmissionpolicies")["items"]
        pending = [
            p["metadata"]["name"]
            for p in policies
            if p.get("status", {}).get("observedGeneration") != p["metadata"]["generation"]
        ]
        if not pending:
            return {p["metadata"]["name"]: p.get("status", {}) for p in policies}
        assert time.monotonic() < deadline, f"not type-checked: {pending}"
        time.sleep(0.5)


@contextmanager
def control_plane(
    resolved: ResolvedCluster, tree: Path, state_dir: Path, declared: bool = True
) -> Iterator[Cluster]:
    """A control plane of the cluster's version started with exactly the flags the Cluster
    declares (`declared=False`: the release's defaults), with a user per team in the group
    the tree's RoleBindings name (kube-local's default group where there is none)."""
    spec = resolved.cluster.spec
    groups = emitted_groups(tree)
    gates = dict(spec.api_server.feature_gates) if declared else {}
    runtime = dict(spec.api_server.runtime_config) if declared else {}
    with kubelocal.running(
        spec.kubernetes_version,
        state_dir,
        teams=[
            f"{team.name}={groups[team.name]}" if team.name in groups else team.name
            for team in resolved.teams
        ],
        feature_gates=gates,
        runtime_config=runtime,
    ) as plane:
        yield Cluster(plane, tree)
