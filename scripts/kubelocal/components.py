"""The command lines of kube-apiserver and kube-controller-manager."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from kubelocal.pki import Pki

SERVICE_CLUSTER_IP_RANGE = "10.96.0.0/24"
SERVICE_ACCOUNT_ISSUER = "https://kubernetes.default.svc.cluster.local"
DISABLED_CONTROLLERS = (
    "cloud-node-lifecycle-controller",
    "node-ipam-controller",
    "node-lifecycle-controller",
    "node-route-controller",
    "service-lb-controller",
)
"""Controllers that need a cloud provider or nodes, where the binary has them (1.37 dropped the
cloud ones); every other default controller runs (serviceaccount, serviceaccount-token, namespace,
resourcequota, garbage-collector, resourceclaim, ...)."""
_ALL_CONTROLLERS = re.compile(r"All controllers: ([a-z0-9, -]+)")


def known_controllers(binary: Path) -> set[str] | None:
    """The controller names ``kube-controller-manager --help`` lists (it refuses unknown names
    in ``--controllers``), or None if the help text has no such list."""
    done = subprocess.run([str(binary), "--help"], capture_output=True, text=True, check=False)
    match = _ALL_CONTROLLERS.search(done.stdout + done.stderr)
    if match is None:
        return None
    return {name.strip() for name in match.group(1).split(",") if name.strip()}


def apiserver_arguments(
    binary: Path,
    pki: Pki,
    *,
    port: int,
    etcd_port: int,
    feature_gates: str,
    runtime_config: str,
) -> list[str]:
    """kube-apiserver on 127.0.0.1:``port`` with RBAC and the default admission chain."""
    argv = [
        str(binary),
        "--bind-address=127.0.0.1",
        "--advertise-address=127.0.0.1",
        # Endpoints may not hold a loopback address: the default "lease" reconciler would fail
        # to write the `kubernetes` Service's endpoints every 10 s. The Service itself exists.
        "--endpoint-reconciler-type=none",
        f"--secure-port={port}",
        f"--etcd-servers=http://127.0.0.1:{etcd_port}",
        "--authorization-mode=Node,RBAC",
        "--allow-privileged=true",
        f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
        f"--client-ca-file={pki.ca.cert}",
        f"--tls-cert-file={pki.apiserver.cert}",
        f"--tls-private-key-file={pki.apiserver.key}",
        f"--service-account-issuer={SERVICE_ACCOUNT_ISSUER}",
        f"--service-account-key-file={pki.service_account_pub}",
        f"--service-account-signing-key-file={pki.service_account_key}",
    ]
    if feature_gates:
        argv.append(f"--feature-gates={feature_gates}")
    if runtime_config:
        argv.append(f"--runtime-config={runtime_config}")
    return argv


def controller_manager_arguments(
    binary: Path, pki: Pki, *, kubeconfig: Path, port: int, cert_dir: Path, feature_gates: str
) -> list[str]:
    """kube-controller-manager talking to the apiserver through ``kubeconfig``.

    ``--use-service-account-credentials=true``: each controller acts as its own service account
    with its bootstrap RBAC role, as in kubeadm clusters. With ``false`` every controller would act
    as ``system:kube-controller-manager``, whose role only lets it bootstrap those accounts: the
    default ServiceAccount would still appear, but the namespace, garbage-collector, resourcequota
    and resourceclaim controllers would be forbidden from their writes.
    """
    known = known_controllers(binary)
    disabled = [name for name in DISABLED_CONTROLLERS if known is None or name in known]
    argv = [
        str(binary),
        f"--kubeconfig={kubeconfig}",
        f"--authentication-kubeconfig={kubeconfig}",
        f"--authorization-kubeconfig={kubeconfig}",
        # The apiserver has no front-proxy (requestheader) CA, so do not look one up in
        # kube-system/extension-apiserver-authentication; verify client certs with our CA.
        "--authentication-skip-lookup=true",
        f"--client-ca-file={pki.ca.cert}",
        "--bind-address=127.0.0.1",
        f"--secure-port={port}",
        f"--cert-dir={cert_dir}",
        "--leader-elect=false",
        f"--service-account-private-key-file={pki.service_account_key}",
        f"--root-ca-file={pki.ca.cert}",
        f"--cluster-signing-cert-file={pki.ca.cert}",
        f"--cluster-signing-key-file={pki.ca.key}",
        "--use-service-account-credentials=true",
        "--controllers=" + ",".join(["*", *(f"-{name}" for name in disabled)]),
    ]
    if feature_gates:
        argv.append(f"--feature-gates={feature_gates}")
    return argv
