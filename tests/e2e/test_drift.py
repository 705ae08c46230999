"""Drift on what a real kube-apiserver returns: the in-sync dump of each cluster
(tests/fixtures/inventory/generate.py, DRIFTS) is created in a control plane of its
Kubernetes version (prod-east 1.37; prod-west 1.34 with v1beta1 slices), then each planted
difference in turn (the objects it changes deleted and created again as planted, and put back
after): `gpufleet drift` on what `kubectl get nodes,resourceslices,devicetaintrules -o yaml`
returns there, to the drift job's read-only ServiceAccount (examples/github-actions/
drift-rbac.yaml, which may not write), finds what it finds on the generated dump, with the
same exit code, and the in-sync cluster imports without a change."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import kubelocal
import pytest

from compiler.cli import main
from tests.e2e.dump_objects import create, delete
from tests.e2e.policies import EXAMPLE, REPO

FIXTURES = REPO / "tests" / "fixtures" / "inventory"
RBAC = REPO / "examples" / "github-actions" / "drift-rbac.yaml"
AS = "system:serviceaccount:gpufleet-system:gpufleet-drift"
"""The drift job's read-only ServiceAccount: every dump is taken as it."""
CASES = [
    ("1.37", "prod-east", {}, {}),
    (
        "1.34",
        "prod-west",
        {"DRADeviceTaints": True},
        {"resource.k8s.io/v1alpha3": True, "resource.k8s.io/v1beta1": True},
    ),
]


def _generate() -> Any:
    sys.path.insert(0, str(FIXTURES))
    try:
        import generate  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(FIXTURES))
    return generate


def _run(*words: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(w) for w in words])
    return code, out.getvalue(), err.getvalue()


def _drift(dump: Path, cluster: str) -> tuple[int, list[tuple[str, str]]]:
    """drift's exit code and (code, message) of each diagnostic, the dump's name left out."""
    code, out, _ = _run(
        "drift", "--dump", dump, "--cluster", cluster,
        "--policies", EXAMPLE, "--out", REPO / "out", "--format", "json",
    )  # fmt: skip
    found = [
        (d["code"], d["message"].replace(str(dump), "DUMP")) for d in json.loads(out)["diagnostics"]
    ]
    return code, found


def _key(item: dict[str, Any]) -> tuple[str, str]:
    return item["kind"], item["metadata"]["name"]


def _swap(plane: kubelocal.ControlPlane, old: list[dict], new: list[dict]) -> None:
    """Make the cluster hold `new` where it holds `old`: objects that differ are deleted and
    created again."""
    before = {_key(i): i for i in old}
    after = {_key(i): i for i in new}
    delete(plane, [i for k, i in before.items() if after.get(k) != i])
    create(plane, [i for k, i in after.items() if before.get(k) != i])


@pytest.mark.parametrize(("version", "cluster", "gates", "runtime"), CASES)
def test_drift_finds_on_the_api_server_what_it_finds_in_the_dump(
    tmp_path: Path,
    version: str,
    cluster: str,
    gates: dict[str, bool],
    runtime: dict[str, bool],
) -> None:
    generate = _generate()
    names = sorted(n for n, (c, plant) in generate.DRIFTS.items() if c == cluster and plant)
    base = generate.drift_items(f"{cluster}-in-sync")
    seen: dict[str, tuple[int, list[tuple[str, str]]]] = {}
    with kubelocal.running(
        version, tmp_path / "kube", feature_gates=gates, runtime_config=runtime
    ) as plane:
        done = plane.kubectl("create", "-f", str(RBAC), check=False)
        assert done.returncode == 0, done.stderr
        for verb, kind in [("list", "resourceslices"), ("delete", "nodes"), ("create", "pods")]:
            allowed = plane.kubectl("auth", "can-i", verb, kind, f"--as={AS}", check=False)
            assert allowed.stdout.strip() == ("yes" if verb == "list" else "no"), (verb, kind)
        create(plane, base)
        for name in [f"{cluster}-in-sync", *names]:
            planted = generate.drift_items(name)
            _swap(plane, base, planted)
            got = plane.kubectl(
                "get", "nodes,resourceslices,devicetaintrules", "-o", "yaml", f"--as={AS}"
            )
            served = tmp_path / f"{name}.served.yaml"
            served.write_text(got.stdout, encoding="utf-8")
            seen[name] = _drift(served, cluster)
            _swap(plane, planted, base)
    for name, found in seen.items():
        written = tmp_path / f"{name}.yaml"
        written.write_text(generate.drift_dump(name), encoding="utf-8")
        assert found == _drift(written, cluster), name
    assert seen[f"{cluster}-in-sync"] == (0, [])
    assert all(seen[name][0] in (1, 2) for name in names)
    # and the in-sync cluster, as the server returns it, is the example's cluster file
    policies = tmp_path / "policies"
    shutil.copytree(EXAMPLE, policies)
    code, out, err = _run(
        "inventory", "import", "--dump", tmp_path / f"{cluster}-in-sync.served.yaml",
        "--cluster", cluster, "--policies", policies,
    )  # fmt: skip
    assert code == 0 and "nothing to change" in out, err
