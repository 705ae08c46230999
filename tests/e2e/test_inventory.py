"""Import on what a real kube-apiserver returns: the fixtures' Nodes, ResourceSlices and
DeviceTaintRules are created in a control plane of their Kubernetes version (1.37: slices
and rules in v1; 1.34: slices written as v1beta1, rules as v1alpha3 with DRADeviceTaints on),
and `kubectl get nodes,resourceslices,devicetaintrules -o yaml` there is imported into the
example fleet: the hand-written cluster file already says it, byte for byte."""

from __future__ import annotations

import contextlib
import io
import shutil
from pathlib import Path

import kubelocal
import pytest
import yaml

from compiler.cli import main
from tests.e2e.dump_objects import create
from tests.e2e.policies import EXAMPLE, REPO

FIXTURES = REPO / "tests" / "fixtures" / "inventory"
CASES = [
    ("1.37", "k137-prod-east.yaml", "prod-east", {}, {}),
    (
        "1.34",
        "k134-prod-west.yaml",
        "prod-west",
        {"DRADeviceTaints": True},
        {"resource.k8s.io/v1alpha3": True, "resource.k8s.io/v1beta1": True},
    ),
]


def _import(policies: Path, dump: Path, cluster: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    argv = ["inventory", "import", "--dump", str(dump), "--cluster", cluster]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*argv, "--policies", str(policies)])
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(("version", "fixture", "cluster", "gates", "runtime"), CASES)
def test_import_of_what_the_api_server_returns(
    tmp_path: Path,
    version: str,
    fixture: str,
    cluster: str,
    gates: dict[str, bool],
    runtime: dict[str, bool],
) -> None:
    with kubelocal.running(
        version, tmp_path / "kube", feature_gates=gates, runtime_config=runtime
    ) as plane:
        create(plane, yaml.safe_load((FIXTURES / fixture).read_text())["items"])
        dump = plane.kubectl("get", "nodes,resourceslices,devicetaintrules", "-o", "yaml")
    path = tmp_path / "dump.yaml"
    path.write_text(dump.stdout)
    served = yaml.safe_load(dump.stdout)["items"]
    kinds = {(i["kind"], i["apiVersion"]) for i in served}
    assert ("ResourceSlice", "resource.k8s.io/v1") in kinds  # the server's preferred version
    assert sum(1 for i in served if i["kind"] == "DeviceTaintRule") == 1
    policies = tmp_path / "policies"
    shutil.copytree(EXAMPLE, policies)
    before = (policies / "clusters" / f"{cluster}.yaml").read_bytes()
    code, out, err = _import(policies, path, cluster)
    assert code == 0, err
    assert out.startswith("ok: ") and "nothing to change" in out
    assert (policies / "clusters" / f"{cluster}.yaml").read_bytes() == before
    assert "[GF811]" in err  # the node that lost a GPU, as the server returns it
    assert "[GF812]" in err  # the DeviceTaintRule's taint
