"""Start, wait for, describe and stop one local control plane: etcd, kube-apiserver and
kube-controller-manager on 127.0.0.1, all state in one directory."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubelocal import build, components, etcd, kubeconfig, processes
from kubelocal.client import ApiClient, http_get
from kubelocal.config import (
    ADMIN_CONTEXT,
    ADMIN_GROUP,
    ADMIN_USER,
    Team,
    merge_flag,
    parse_feature_gates,
    parse_runtime_config,
    parse_teams,
)
from kubelocal.errors import KubeLocalError
from kubelocal.pki import Identity, make_pki
from kubelocal.processes import ProcessRecord
from kubelocal.progress import Laps, say
from kubelocal.releases import resolve

STATE_FILE = "state.json"
ETCD_TIMEOUT = 30.0
APISERVER_TIMEOUT = 120.0
CONTROLLER_MANAGER_TIMEOUT = 60.0


@dataclass(frozen=True)
class ControlPlane:
    """A running control plane, as a test or a person uses it."""

    version: str
    """The exact Kubernetes version serving, e.g. ``v1.36.3``."""
    state_dir: Path
    kubeconfig: Path
    server: str
    """``https://127.0.0.1:<port>``."""
    teams: tuple[Team, ...]
    logs: Mapping[str, Path]
    kubectl_binary: Path
    """kubectl of the same release, built with the server: no version skew, none to install."""
    """Log file of each component: etcd, kube-apiserver, kube-controller-manager."""
    startup_seconds: Mapping[str, float] = field(default_factory=dict)
    """How long each phase of start took (build, pki, etcd, kube-apiserver, ...)."""
    admin_context: str = ADMIN_CONTEXT

    def team(self, name: str) -> Team:
        """The team called ``name`` (its user, group and context); KubeLocalError if unknown."""
        for team in self.teams:
            if team.name == name:
                return team
        known = ", ".join(team.name for team in self.teams) or "none"
        raise KubeLocalError(f"no team {name!r} in this control plane (teams: {known})")

    def team_context(self, name: str) -> str:
        """The kubeconfig context that acts as team ``name``."""
        return self.team(name).context

    def kubectl_argv(self, *args: str, context: str | None = None) -> list[str]:
        """``kubectl --kubeconfig K --context C ARGS...`` (context defaults to admin)."""
        return [
            str(self.kubectl_binary),
            "--kubeconfig",
            str(self.kubeconfig),
            "--context",
            context or self.admin_context,
            *args,
        ]

    def kubectl(
        self, *args: str, context: str | None = None, check: bool = True, input: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run kubectl (see kubectl_argv) and return its output as text.

        With ``check`` a non-zero exit raises subprocess.CalledProcessError.
        """
        return subprocess.run(
            self.kubectl_argv(*args, context=context),
            input=input,
            capture_output=True,
            text=True,
            check=check,
        )

    def api(self, team: str | None = None) -> ApiClient:
        """A bare HTTPS client acting as the admin, or as ``team`` when given."""
        stem = "admin" if team is None else _team_stem(self.team(team))
        pki = self.state_dir / "pki"
        return ApiClient(self.server, pki / "ca.crt", pki / f"{stem}.crt", pki / f"{stem}.key")


def state_dir_for(kubeconfig_path: Path) -> Path:
    """The state directory the CLI keeps beside a kubeconfig: ``<kubeconfig>.d``."""
    return kubeconfig_path.with_name(kubeconfig_path.name + ".d")


def _team_stem(team: Team) -> str:
    return f"team-{team.name}"


class _Startup:
    """Bookkeeping while starting: every spawned process is recorded in state.json at once, so
    ``stop`` finds it even if this process is killed mid-start."""

    def __init__(self, state_dir: Path, state: dict[str, Any], die_with_parent: bool) -> None:
        self.state_dir = state_dir
        self.state = state
        self.die_with_parent = die_with_parent
        self.records: list[ProcessRecord] = []
        self.save()

    def save(self) -> None:
        self.state["processes"] = [record.to_json() for record in self.records]
        tmp = self.state_dir / (STATE_FILE + ".tmp")
        tmp.write_text(json.dumps(self.state, indent=2) + "\n")
        tmp.replace(self.state_dir / STATE_FILE)

    def spawn(self, name: str, argv: list[str]) -> ProcessRecord:
        log = self.state_dir / "logs" / f"{name}.log"
        self.state.setdefault("argv", {})[name] = argv
        _, record = processes.spawn(name, argv, log, die_with_parent=self.die_with_parent)
        self.records.append(record)
        self.save()
        return record


def wait_for(
    started: Sequence[ProcessRecord], what: str, timeout: float, probe: Callable[[], str | None]
) -> None:
    """Poll ``probe`` (None = ready, else the latest status) until ready, ``timeout`` passes or a
    started process dies; the errors quote the end of the log of the newest (or the dead) one."""
    record = started[-1]
    deadline = time.monotonic() + timeout
    latest = "no answer yet"
    delay = 0.05
    while True:
        for dead in (r for r in reversed(started) if not processes.is_running(r)):
            raise KubeLocalError(
                f"{dead.name} exited while waiting for {record.name}'s {what}; last lines of"
                f" {dead.log}:\n" + processes.tail(dead.log)
            )
        try:
            status = probe()
        except OSError as error:
            status = f"{type(error).__name__}: {error}"
        if status is None:
            return
        latest = status
        if time.monotonic() > deadline:
            raise KubeLocalError(
                f"{record.name}: no {what} after {timeout:.0f}s (latest: {latest.strip()[:500]});"
                f" last lines of {record.log}:\n" + processes.tail(record.log)
            )
        time.sleep(delay)
        delay = min(delay * 1.5, 0.5)


def expect(status_body: tuple[int, str], ok: Callable[[int, str], bool]) -> str | None:
    """A wait_for probe's answer: None if ``ok(status, body)``, else ``HTTP <status>: <body>``."""
    status, body = status_body
    return None if ok(status, body) else f"HTTP {status}: {body}"


def _prepare(state_dir: Path) -> None:
    """Make ``state_dir`` empty, refusing a running control plane or a directory not ours."""
    if state_dir.exists():
        state_file = state_dir / STATE_FILE
        if state_file.exists():
            running = [r for r in _records(state_dir) if processes.is_running(r)]
            if running:
                pids = ", ".join(f"{r.name} {r.pid}" for r in running)
                raise KubeLocalError(
                    f"a control plane is already running from {state_dir} ({pids}): stop it first"
                )
            shutil.rmtree(state_dir)
        elif any(state_dir.iterdir()):
            raise KubeLocalError(f"{state_dir} is not empty and holds no kube-local state")
    state_dir.mkdir(parents=True, exist_ok=True)
    state_dir.chmod(0o700)


def start(
    version: str,
    kubeconfig_path: Path,
    state_dir: Path,
    teams: Iterable[str | Team] = (),
    feature_gates: str | Mapping[str, bool | str] | None = None,
    runtime_config: str | Mapping[str, bool | str] | None = None,
    *,
    die_with_parent: bool = True,
) -> ControlPlane:
    """Build (if needed) and start a control plane; return once it serves and controllers run.

    ``die_with_parent`` ties the processes to the calling thread (tests); without it they keep
    running after this process exits (the CLI), until ``stop``. On failure everything started is
    stopped again and the logs stay in ``state_dir``.
    """
    release = resolve(version)
    team_list = parse_teams(teams)
    gates = merge_flag(release.feature_gates, parse_feature_gates(feature_gates))
    runtime = merge_flag(release.runtime_config, parse_runtime_config(runtime_config))
    kubeconfig_path = kubeconfig_path.absolute()
    state_dir = state_dir.absolute()
    laps = Laps()
    binaries = build.ensure_built(release)
    etcd_binary = etcd.binary()
    laps.lap("build")
    _prepare(state_dir)
    startup = _Startup(state_dir, {"version": release.version}, die_with_parent)
    identities = [
        Identity("admin", ADMIN_USER, ADMIN_GROUP),
        Identity("kube-controller-manager", "system:kube-controller-manager"),
        *(Identity(_team_stem(team), team.user, team.group) for team in team_list),
    ]
    pki = make_pki(state_dir / "pki", identities)
    laps.lap("pki")
    etcd_port, peer_port, api_port, kcm_port = processes.free_ports(4)
    server = f"https://127.0.0.1:{api_port}"
    kubeconfig.write(
        kubeconfig_path,
        server,
        pki.ca.cert,
        [
            kubeconfig.Context(ADMIN_CONTEXT, ADMIN_USER, pki.clients["admin"]),
            *(
                kubeconfig.Context(team.context, team.user, pki.clients[_team_stem(team)])
                for team in team_list
            ),
        ],
    )
    kcm_kubeconfig = state_dir / "kube-controller-manager.kubeconfig"
    kubeconfig.write(
        kcm_kubeconfig,
        server,
        pki.ca.cert,
        [
            kubeconfig.Context(
                "kube-controller-manager",
                "system:kube-controller-manager",
                pki.clients["kube-controller-manager"],
            )
        ],
    )
    startup.state.update(
        {
            "server": server,
            "kubeconfig": str(kubeconfig_path),
            "teams": [{"name": t.name, "group": t.group, "user": t.user} for t in team_list],
            "feature_gates": gates,
            "runtime_config": runtime,
            "ports": {
                "etcd": etcd_port,
                "etcd-peer": peer_port,
                "kube-apiserver": api_port,
                "kube-controller-manager": kcm_port,
            },
        }
    )
    startup.save()
    admin = ApiClient(server, pki.ca.cert, pki.clients["admin"].cert, pki.clients["admin"].key)
    try:
        startup.spawn(
            "etcd", etcd.arguments(etcd_binary, state_dir / "etcd-data", etcd_port, peer_port)
        )
        wait_for(
            startup.records,
            "healthy /health",
            ETCD_TIMEOUT,
            lambda: expect(
                http_get(f"http://127.0.0.1:{etcd_port}/health"),
                lambda status, body: status == 200 and '"health":"true"' in body.replace(" ", ""),
            ),
        )
        laps.lap("etcd")
        startup.spawn(
            "kube-apiserver",
            components.apiserver_arguments(
                binaries["kube-apiserver"],
                pki,
                port=api_port,
                etcd_port=etcd_port,
                feature_gates=gates,
                runtime_config=runtime,
            ),
        )
        wait_for(
            startup.records,
            "ready /readyz",
            APISERVER_TIMEOUT,
            lambda: expect(admin.get("/readyz"), lambda status, _: status == 200),
        )
        laps.lap("kube-apiserver")
        startup.spawn(
            "kube-controller-manager",
            components.controller_manager_arguments(
                binaries["kube-controller-manager"],
                pki,
                kubeconfig=kcm_kubeconfig,
                port=kcm_port,
                cert_dir=state_dir / "kube-controller-manager-certs",
                feature_gates=gates,
            ),
        )
        wait_for(
            startup.records,
            "ServiceAccount default/default",
            CONTROLLER_MANAGER_TIMEOUT,
            lambda: expect(
                admin.get("/api/v1/namespaces/default/serviceaccounts/default"),
                lambda status, _: status == 200,
            ),
        )
        laps.lap("kube-controller-manager")
    except BaseException:
        _stop_records(startup.records)
        raise
    return ControlPlane(
        version=release.version,
        state_dir=state_dir,
        kubeconfig=kubeconfig_path,
        server=server,
        teams=team_list,
        logs={record.name: record.log for record in startup.records},
        startup_seconds=laps.seconds,
        kubectl_binary=binaries["kubectl"],
    )


def _records(state_dir: Path) -> list[ProcessRecord]:
    try:
        state = json.loads((state_dir / STATE_FILE).read_text())
    except FileNotFoundError:
        return []
    except ValueError as error:
        raise KubeLocalError(f"{state_dir / STATE_FILE} is damaged: {error}") from None
    return [ProcessRecord.from_json(item) for item in state.get("processes", [])]


def _stop_records(records: Sequence[ProcessRecord]) -> list[str]:
    """Stop the clients of etcd first (kube-controller-manager, kube-apiserver), then etcd."""
    clients = [record for record in reversed(records) if record.name != "etcd"]
    stopped = processes.stop_all(clients)
    stopped += processes.stop_all([record for record in records if record.name == "etcd"])
    processes.wait_reaped(records)
    return stopped


def read_state(state_dir: Path) -> dict[str, Any] | None:
    """The state.json of ``state_dir`` (version, server, ports, argv, processes), or None."""
    try:
        state: dict[str, Any] = json.loads((state_dir / STATE_FILE).read_text())
    except FileNotFoundError:
        return None
    return state


def update_state(state_dir: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Apply ``change`` to state.json in place (atomically replaced), e.g. to record a process
    started next to the control plane (Kueue) so that ``stop`` ends it too."""
    state = read_state(state_dir)
    if state is None:
        raise KubeLocalError(f"no kube-local control plane in {state_dir}")
    change(state)
    tmp = state_dir / (STATE_FILE + ".tmp")
    tmp.write_text(json.dumps(state, indent=2) + "\n")
    tmp.replace(state_dir / STATE_FILE)


def attach(state_dir: Path) -> ControlPlane:
    """The control plane running from ``state_dir`` (one ``kube-local up`` started, say), as a
    ControlPlane; KubeLocalError if none runs there."""
    state = read_state(state_dir)
    running = [record for record in _records(state_dir) if processes.is_running(record)]
    if state is None or "kube-apiserver" not in {record.name for record in running}:
        raise KubeLocalError(f"no running kube-local control plane in {state_dir}")
    release = resolve(state["version"])
    return ControlPlane(
        version=release.version,
        state_dir=state_dir,
        kubeconfig=Path(state["kubeconfig"]),
        server=state["server"],
        teams=tuple(Team(team["name"], team["group"]) for team in state.get("teams", [])),
        logs={record.name: record.log for record in _records(state_dir)},
        kubectl_binary=build.binary(release, "kubectl"),
    )


def status(state_dir: Path) -> list[tuple[ProcessRecord, bool, int | None]]:
    """Each recorded process with whether it runs and its resident memory in bytes."""
    return [
        (record, processes.is_running(record), processes.rss_bytes(record))
        for record in _records(state_dir)
    ]


def stop(state_dir: Path, *, remove: bool = True, kubeconfig_path: Path | None = None) -> list[str]:
    """Stop every process recorded in ``state_dir`` (SIGTERM, SIGKILL after 10 s; etcd last), then
    remove ``state_dir`` (and ``kubeconfig_path``) when ``remove``. A directory without kube-local's
    state.json is never touched. Returns the names of the processes that were running; nothing
    running and nothing to remove is not an error."""
    ours = (state_dir / STATE_FILE).exists()
    stopped = _stop_records(_records(state_dir))
    if remove and ours:
        shutil.rmtree(state_dir, ignore_errors=True)
        if kubeconfig_path is not None:
            kubeconfig_path.unlink(missing_ok=True)
    return stopped


@contextlib.contextmanager
def running(
    version: str = "1.36",
    state_dir: Path | str | None = None,
    teams: Iterable[str | Team] = (),
    feature_gates: str | Mapping[str, bool | str] | None = None,
    runtime_config: str | Mapping[str, bool | str] | None = None,
    *,
    keep_state: bool = False,
) -> Iterator[ControlPlane]:
    """A control plane for the duration of a ``with`` block (e.g. a pytest session fixture).

    ``state_dir`` (default: a new temporary directory) must be empty or missing; the kubeconfig
    is ``<state_dir>/kubeconfig``. Processes die with the calling thread even if it is killed
    (PR_SET_PDEATHSIG), and are stopped on exit, exception or KeyboardInterrupt; the state
    directory is then removed unless ``keep_state``.
    """
    temporary = state_dir is None
    directory = Path(state_dir or tempfile.mkdtemp(prefix="kube-local-")).absolute()
    try:
        yield start(
            version,
            directory / "kubeconfig",
            directory,
            teams,
            feature_gates,
            runtime_config,
            die_with_parent=True,
        )
    finally:
        if stop(directory, remove=not keep_state):
            say(f"stopped the control plane in {directory}")
        if temporary and not keep_state:
            shutil.rmtree(directory, ignore_errors=True)
