"""A real Kueue manager (``sigs.k8s.io/kueue/cmd/kueue`` of an exact release) as a process next to
a kube-local control plane, its webhooks served on loopback and called by the API server.

    with kubelocal.running("1.36") as plane:
        with kubelocal.kueue.running(plane, "0.19", Path("configuration.yaml")) as manager:
            ...  # queues admit, Jobs are suspended and unsuspended, webhooks default/validate
            print(manager.version, manager.log)

How it runs (what differs from an in-cluster install, and why):

- **Objects**: Kueue's own Namespace, CRDs, RBAC for its ServiceAccount, webhook Secret and
  webhook configurations, rendered from the release's ``config/default`` (kueue_manifests.py) and
  applied server-side (field manager ``kube-local-kueue``, ``--force-conflicts``: the CRDs take
  over fields another manager, e.g. a gpufleet tree's vendored CRDs, applied). Every webhook and
  CRD conversion webhook calls ``https://127.0.0.1:<port>/...`` instead of a Service.
- **Certificates**: Kueue's internal cert management runs (it must, see kueue_config.py). kube-local
  seeds the webhook Secret with a CA and a serving certificate for both the Service's DNS name and
  127.0.0.1, and puts the pair in the manager's certDir (what the Secret volume would do); Kueue's
  cert rotator finds them valid, keeps them and injects the CA into the webhook configurations and
  CRDs itself.
- **Identity**: a client certificate (signed by the control plane's CA) for the user
  ``system:serviceaccount:kueue-system:kueue-controller-manager``, so the manager holds exactly the
  permissions the release's RBAC grants its ServiceAccount.
- **Lifetime**: recorded in the control plane's state.json like etcd or kube-apiserver, so
  ``stop``/``kube-local down`` end it; with ``die_with_parent`` it also dies with the calling
  thread (PR_SET_PDEATHSIG). ``stop`` removes its webhook configurations, since nothing would
  answer them.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubelocal import (
    control_plane,
    kubeconfig,
    kueue_build,
    kueue_config,
    kueue_manifests,
    pki,
    processes,
)
from kubelocal.client import http_get
from kubelocal.control_plane import ControlPlane
from kubelocal.errors import KubeLocalError
from kubelocal.processes import ProcessRecord
from kubelocal.progress import Laps, say

NAME = "kueue"
"""The process record's name and the state directory's subdirectory."""
FIELD_MANAGER = "kube-local-kueue"
CA_NAME = "kueue-ca"
"""The CA name Kueue's cert rotator checks its CA certificate against (``caName`` in
``pkg/util/cert/cert.go``): a seeded CA without it would be replaced by a new one."""
READY_TIMEOUT = 120.0
ESTABLISHED_TIMEOUT = 60.0


@dataclass(frozen=True)
class KueueManager:
    """A running Kueue manager."""

    version: str
    """The exact Kueue release, e.g. ``v0.19.2``."""
    log: Path
    configuration: Path
    """The Configuration the manager read: the caller's plus kube-local's settings."""
    record: ProcessRecord
    user: str
    """The Kubernetes user it acts as (its ServiceAccount's name)."""
    ports: Mapping[str, int]
    """Loopback ports: ``webhook``, ``metrics``, ``health``."""
    startup_seconds: Mapping[str, float] = field(default_factory=dict)

    def is_running(self) -> bool:
        """Whether the manager process is alive."""
        return processes.is_running(self.record)

    def rss_bytes(self) -> int | None:
        """The manager's resident memory, or None if it is not running."""
        return processes.rss_bytes(self.record)


def start(
    plane: ControlPlane,
    version: str = "0.19",
    configuration: Path | str | None = None,
    *,
    die_with_parent: bool = True,
    restart: bool = False,
) -> KueueManager:
    """Build (if needed), install and start Kueue ``version`` against ``plane``; return once its
    webhooks answer the API server.

    ``configuration`` is a Configuration file (default: an empty v1beta2 one), read once, at start,
    as Kueue does. A Kueue already running for ``plane`` is an error unless ``restart``. On failure
    the manager is stopped, its webhook configurations removed and its log kept.
    """
    laps = Laps()
    release = kueue_build.resolve(version)
    user_config = _user_configuration(configuration)
    binary = kueue_build.ensure_built(release)
    source = kueue_build.source_dir(release)
    laps.lap("build")
    if _running_record(plane.state_dir) is not None:
        if not restart:
            raise KubeLocalError(f"Kueue already runs for {plane.kubeconfig}: stop it first")
        say("stopping the running Kueue first")
        stop(plane)
    install = kueue_manifests.render(plane.kubectl_binary, source)
    directory = plane.state_dir / NAME
    shutil.rmtree(directory, ignore_errors=True)
    files = _credentials(plane, install, directory)
    ports = dict(zip(("webhook", "metrics", "health"), processes.free_ports(3), strict=True))
    config = kueue_config.for_local_run(
        user_config,
        namespace=install.namespace_name,
        webhook_service=install.webhook_service,
        webhook_secret=install.secret["metadata"]["name"],
        cert_dir=directory / "certs",
        ports=ports,
    )
    kueue_config.write(directory / "configuration.yaml", config)
    crds, webhooks = kueue_manifests.loopback(install, ports["webhook"], files["ca.crt"])
    log = plane.state_dir / "logs" / f"{NAME}.log"
    control_plane.update_state(
        plane.state_dir, lambda state: _remember(state, release, ports, log, webhooks)
    )
    laps.lap("prepare")
    try:
        _apply(plane, [install.namespace, *crds])
        _established(plane, [crd["metadata"]["name"] for crd in crds])
        _apply(plane, [*install.rbac, kueue_manifests.secret_with(install, files), *webhooks])
        laps.lap("install")
        argv = [
            str(binary),
            f"--config={directory / 'configuration.yaml'}",
            f"--kubeconfig={directory / 'kubeconfig'}",
        ]
        log.unlink(missing_ok=True)  # the log of this run only, not of a previous one
        _, record = processes.spawn(NAME, argv, log, die_with_parent=die_with_parent)
        control_plane.update_state(plane.state_dir, lambda state: _add_record(state, record))
        _wait_ready(plane, record, f"http://127.0.0.1:{ports['health']}", config, laps)
    except BaseException:
        stop(plane)
        raise
    return KueueManager(
        version=release.version,
        log=log,
        configuration=directory / "configuration.yaml",
        record=record,
        user=install.user,
        ports=ports,
        startup_seconds=laps.seconds,
    )


def stop(plane: ControlPlane) -> bool:
    """Stop the Kueue of ``plane`` if one runs, forget it and delete its webhook configurations
    (they would fail every matching request). Returns whether it was running."""
    state = control_plane.read_state(plane.state_dir) or {}
    kueue_state = state.get(NAME) or {}
    records = [r for r in _records(state) if r.name == NAME]
    was_running = bool(processes.stop_all(records))
    processes.wait_reaped(records)
    for kind_name in kueue_state.get("webhook_configurations", []):
        plane.kubectl(
            "delete",
            "--ignore-not-found",
            "--wait=false",
            "--request-timeout=10s",
            kind_name,
            check=False,
        )
    if state:
        control_plane.update_state(plane.state_dir, _forget)
    return was_running


@contextlib.contextmanager
def running(
    plane: ControlPlane, version: str = "0.19", configuration: Path | str | None = None
) -> Iterator[KueueManager]:
    """Kueue for the duration of a ``with`` block: started as ``start`` does (dying with the
    calling thread), stopped on exit, exception or KeyboardInterrupt."""
    manager = start(plane, version, configuration, die_with_parent=True)
    try:
        yield manager
    finally:
        if stop(plane):
            say(f"stopped Kueue {manager.version}")


def _user_configuration(configuration: Path | str | None) -> dict[str, Any]:
    if configuration is None:
        return {"apiVersion": f"{kueue_config.API_GROUP}/v1beta2", "kind": "Configuration"}
    return kueue_config.load(Path(configuration))


def _credentials(
    plane: ControlPlane, install: kueue_manifests.Install, directory: Path
) -> dict[str, Path]:
    """Kueue's webhook CA and serving pair (also copied to certs/ as the Secret volume would be),
    and its kubeconfig; returns the Secret's files by key."""
    service = f"{install.webhook_service}.{install.namespace_name}.svc"
    pki_dir = directory / "pki"
    ca = pki.make_ca(pki_dir, "webhook-ca", CA_NAME, [f"DNS:{CA_NAME}"], rsa=True)
    serving = pki.issue(
        pki_dir, ca, "webhook", service, None, "serverAuth", [f"DNS:{service}", "IP:127.0.0.1"]
    )
    cluster_ca = pki.KeyPair(plane.state_dir / "pki" / "ca.crt", plane.state_dir / "pki" / "ca.key")
    client = pki.issue(pki_dir, cluster_ca, "manager", install.user, None, "clientAuth", ())
    kubeconfig.write(
        directory / "kubeconfig",
        plane.server,
        cluster_ca.cert,
        [kubeconfig.Context(NAME, install.user, client)],
    )
    certs = directory / "certs"
    certs.mkdir(mode=0o700)
    shutil.copyfile(serving.cert, certs / "tls.crt")
    shutil.copyfile(serving.key, certs / "tls.key")
    return {"ca.crt": ca.cert, "ca.key": ca.key, "tls.crt": serving.cert, "tls.key": serving.key}


def _apply(plane: ControlPlane, objects: list[dict[str, Any]]) -> None:
    done = plane.kubectl(
        "apply",
        "--server-side",
        "--force-conflicts",
        f"--field-manager={FIELD_MANAGER}",
        "-f",
        "-",
        input=kueue_manifests.to_yaml(objects),
        check=False,
    )
    if done.returncode != 0:
        raise KubeLocalError(f"applying Kueue's objects failed: {done.stderr.strip()}")


def _established(plane: ControlPlane, names: list[str]) -> None:
    done = plane.kubectl(
        "wait",
        "--for=condition=Established",
        f"--timeout={ESTABLISHED_TIMEOUT:.0f}s",
        *(f"customresourcedefinition/{name}" for name in names),
        check=False,
    )
    if done.returncode != 0:
        raise KubeLocalError(f"Kueue's CRDs are not Established: {done.stderr.strip()}")


def _wait_ready(
    plane: ControlPlane, record: ProcessRecord, health: str, config: dict[str, Any], laps: Laps
) -> None:
    """Wait for the manager's readiness endpoint, then for its webhooks to answer the API
    server (see _probe)."""
    ready = health + kueue_config.readiness_path(config)
    control_plane.wait_for(
        [record],
        f"ready {ready}",
        READY_TIMEOUT,
        lambda: control_plane.expect(http_get(ready), lambda status, _: status == 200),
    )
    laps.lap("ready")
    control_plane.wait_for(
        [record], "webhooks answering the API server", READY_TIMEOUT, lambda: _probe(plane)
    )
    laps.lap("webhooks")


_PROBE = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: kube-local-webhook-probe
"""


def _probe(plane: ControlPlane) -> str | None:
    """None once a server-side dry run of a ResourceFlavor passes Kueue's mutating and validating
    webhooks (the API server reached the manager over loopback TLS), else kubectl's error."""
    done = plane.kubectl(
        "create", "--dry-run=server", "-o", "name", "-f", "-", input=_PROBE, check=False
    )
    return None if done.returncode == 0 else done.stderr


def _records(state: Mapping[str, Any]) -> list[ProcessRecord]:
    return [ProcessRecord.from_json(item) for item in state.get("processes", [])]


def _running_record(state_dir: Path) -> ProcessRecord | None:
    state = control_plane.read_state(state_dir) or {}
    alive = [r for r in _records(state) if r.name == NAME and processes.is_running(r)]
    return alive[0] if alive else None


def _remember(
    state: dict[str, Any],
    release: kueue_build.KueueRelease,
    ports: Mapping[str, int],
    log: Path,
    webhooks: list[dict[str, Any]],
) -> None:
    state[NAME] = {
        "version": release.version,
        "ports": dict(ports),
        "log": str(log),
        "webhook_configurations": [
            f"{w['kind'].lower()}/{w['metadata']['name']}" for w in webhooks
        ],
    }


def _add_record(state: dict[str, Any], record: ProcessRecord) -> None:
    state["processes"] = [p for p in state.get("processes", []) if p.get("name") != NAME]
    state["processes"].append(record.to_json())


def _forget(state: dict[str, Any]) -> None:
    state["processes"] = [p for p in state.get("processes", []) if p.get("name") != NAME]
    state.pop(NAME, None)
