"""The Configuration file a kube-local Kueue manager reads: the caller's, plus the settings that
make it run as a local process next to a kube-local control plane.

What the caller's file says about Kueue's behaviour (queueing, namespaces, DRA mappings, feature
gates, ...) is kept as is. kube-local owns, and overwrites:

- ``webhook``: served on 127.0.0.1 at a free port, certificates from a directory of its own;
- ``metrics.bindAddress`` and ``health.healthProbeBindAddress``: free loopback ports;
- ``leaderElection.leaderElect``: false (one replica);
- ``internalCertManagement``: enabled, naming the rendered install's Service and Secret. Disabling
  it is not an option off-cluster: Kueue then reads its metrics certificate from the fixed path
  /etc/kueue/metrics/certs and exits without one (``cmd/kueue/main.go``);
- ``featureGates.VisibilityOnDemand``: false. The visibility API server writes its self-signed
  certificates to the fixed directory /visibility and listens on 0.0.0.0 (``pkg/visibility``);
  kube-local does not serve it, and refuses a file that turns it on.

``namespace`` must be absent or the install's (``kueue-system``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from kubelocal.errors import KubeLocalError

API_GROUP = "config.kueue.x-k8s.io"
LOOPBACK = "127.0.0.1"
VISIBILITY_GATE = "VisibilityOnDemand"


def load(path: Path) -> dict[str, Any]:
    """The caller's Configuration; KubeLocalError unless it is one Kueue Configuration mapping."""
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as error:
        raise KubeLocalError(f"Kueue configuration {path}: {error.strerror}") from None
    except yaml.YAMLError as error:
        raise KubeLocalError(f"Kueue configuration {path} is not YAML: {error}") from None
    if (
        not isinstance(data, dict)
        or data.get("kind") != "Configuration"
        or not str(data.get("apiVersion", "")).startswith(f"{API_GROUP}/")
    ):
        raise KubeLocalError(
            f"Kueue configuration {path}: expected one mapping with apiVersion"
            f" {API_GROUP}/v1beta2 (or v1beta1) and kind Configuration"
        )
    return data


def for_local_run(
    data: Mapping[str, Any],
    *,
    namespace: str,
    webhook_service: str,
    webhook_secret: str,
    cert_dir: Path,
    ports: Mapping[str, int],
) -> dict[str, Any]:
    """``data`` with kube-local's settings (see the module docstring); ``ports`` has ``webhook``,
    ``metrics`` and ``health``."""
    configured = data.get("namespace")
    if configured not in (None, namespace):
        raise KubeLocalError(
            f"Kueue configuration: namespace {configured!r} is not supported; kube-local installs"
            f" Kueue's objects in {namespace!r} (leave `namespace` out)"
        )
    gates = dict(data.get("featureGates") or {})
    if gates.get(VISIBILITY_GATE) is True:
        raise KubeLocalError(
            f"Kueue configuration: featureGates.{VISIBILITY_GATE}: true is not supported by"
            " kube-local (the visibility server writes certificates to /visibility)"
        )
    gates[VISIBILITY_GATE] = False
    return {
        **data,
        "namespace": namespace,
        "webhook": {"host": LOOPBACK, "port": ports["webhook"], "certDir": str(cert_dir)},
        "metrics": {**(data.get("metrics") or {}), "bindAddress": f"{LOOPBACK}:{ports['metrics']}"},
        "health": {
            **(data.get("health") or {}),
            "healthProbeBindAddress": f"{LOOPBACK}:{ports['health']}",
        },
        "leaderElection": {**(data.get("leaderElection") or {}), "leaderElect": False},
        "internalCertManagement": {
            "enable": True,
            "webhookServiceName": webhook_service,
            "webhookSecretName": webhook_secret,
        },
        "featureGates": gates,
    }


def readiness_path(data: Mapping[str, Any]) -> str:
    """The manager's readiness endpoint: ``/readyz`` unless ``health.readinessEndpointName``."""
    return "/" + str((data.get("health") or {}).get("readinessEndpointName") or "readyz")


def write(path: Path, data: Mapping[str, Any]) -> None:
    """Write the Configuration Kueue will read."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(dict(data), sort_keys=False))
