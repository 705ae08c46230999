"""kube-local: a real Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager) on
127.0.0.1, built from the Go module proxy and started in one command or one ``with`` block.

As a library (``scripts/`` on sys.path), e.g. a pytest session fixture::

    import kubelocal

    @pytest.fixture(scope="session")
    def cluster(tmp_path_factory):
        with kubelocal.running("1.36", tmp_path_factory.mktemp("kube"),
                               teams=["data-science", "ml-research=ml"]) as cp:
            yield cp

    def test_admin_sees_namespaces(cluster):
        assert cluster.kubectl("get", "ns").returncode == 0
        assert cluster.kubectl("auth", "can-i", "create", "pods", "-n", "data-science",
                               context=cluster.team_context("data-science"), check=False
                               ).stdout.strip() == "no"

A real Kueue manager next to it (see kubelocal/kueue.py)::

    with kubelocal.kueue.running(cp, version="0.19", configuration=path) as manager:
        ...  # manager.version, manager.log

See ``scripts/kube-local --help`` for the command line.
"""

from kubelocal import kueue
from kubelocal.build import ensure_built
from kubelocal.client import ApiClient
from kubelocal.config import Team
from kubelocal.control_plane import ControlPlane, running, start, state_dir_for, status, stop
from kubelocal.errors import KubeLocalError
from kubelocal.releases import RELEASES, Release, resolve

__all__ = [
    "RELEASES",
    "ApiClient",
    "ControlPlane",
    "KubeLocalError",
    "Release",
    "Team",
    "ensure_built",
    "kueue",
    "resolve",
    "running",
    "start",
    "state_dir_for",
    "status",
    "stop",
]
