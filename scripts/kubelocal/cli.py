"""kube-local: a real local Kubernetes control plane in one command.

  scripts/kube-local up --version 1.36 --kubeconfig PATH [--team NAME[=GROUP]]...
                        [--feature-gates A=true,B=true] [--runtime-config X=true,...]
      Build the release if it is not cached, start etcd, kube-apiserver and
      kube-controller-manager on 127.0.0.1 and write PATH: cluster "kube-local", context "admin"
      (current; user kube-local-admin in system:masters) and one context per team, named after
      the team (user gpufleet-team-NAME-user, group GROUP, default gpufleet-team-NAME; it may do
      nothing until RoleBindings grant it). The processes keep running after `up` returns; state,
      certificates and logs are in PATH.d/.
  scripts/kube-local down --kubeconfig PATH
      Stop what `up` started (SIGTERM, SIGKILL after 10 s) and remove PATH and PATH.d/.
      Does nothing, successfully, when nothing runs.
  scripts/kube-local status --kubeconfig PATH
      Each component's pid, whether it runs, its memory, its log.
  scripts/kube-local build --version 1.36
      Only build (or find cached) the binaries and print their paths.
  scripts/kube-local kueue --kubeconfig PATH --version 0.19 [--config FILE]
      Start the real Kueue manager of that release against the control plane of PATH, in the
      background, with the Configuration FILE (read once, at start; default: an empty one). Its
      CRDs, RBAC and webhooks are installed from the release, the webhooks served on 127.0.0.1.
      Run it again to restart Kueue (e.g. with a changed FILE); `down` stops it with the rest.
  scripts/kube-local kueue-build --version 0.19
      Only build (or find cached) the Kueue manager and print its path.

Versions: 1.32 to 1.37 (the newest known patch, see kubelocal/releases.py) or an exact X.Y.Z.
Binaries are cached in ${GPUFLEET_CACHE:-~/.cache/gpufleet}/kube/X.Y.Z/bin/; the first build of a
release takes 5-10 minutes on 2 cores and needs Go 1.26.x and the Go module proxy.
Kueue versions: 0.18 and 0.19 (see kubelocal/kueue_build.py), cached in .../kueue/X.Y.Z/bin/kueue;
the first build takes about 5 minutes.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from kubelocal import build, control_plane, kueue, kueue_build
from kubelocal.config import ADMIN_CONTEXT
from kubelocal.errors import KubeLocalError
from kubelocal.progress import duration, say
from kubelocal.releases import resolve


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kube-local",
        description=__doc__.split("\n", 1)[0],
        epilog=__doc__.split("\n", 2)[2],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    up = commands.add_parser("up", help="build if needed and start a control plane")
    up.add_argument("--version", required=True, help="Kubernetes version: 1.36 or 1.36.3")
    up.add_argument("--kubeconfig", required=True, type=Path, help="kubeconfig to write")
    up.add_argument(
        "--team",
        action="append",
        default=[],
        metavar="NAME[=GROUP]",
        help="a team identity and context (repeatable); GROUP defaults to gpufleet-team-NAME",
    )
    up.add_argument("--feature-gates", default="", metavar="A=true,B=false")
    up.add_argument("--runtime-config", default="", metavar="GROUP/VERSION=true,...")
    down = commands.add_parser("down", help="stop a control plane and remove its files")
    down.add_argument("--kubeconfig", required=True, type=Path)
    status = commands.add_parser("status", help="show the processes of a control plane")
    status.add_argument("--kubeconfig", required=True, type=Path)
    only_build = commands.add_parser("build", help="only build (or find cached) the binaries")
    only_build.add_argument("--version", required=True)
    kueue_parser = commands.add_parser("kueue", help="start (or restart) Kueue in the background")
    kueue_parser.add_argument("--kubeconfig", required=True, type=Path)
    kueue_parser.add_argument("--version", required=True, help="Kueue version: 0.19 or 0.19.2")
    kueue_parser.add_argument("--config", type=Path, help="Kueue Configuration file")
    kueue_build_parser = commands.add_parser("kueue-build", help="only build the Kueue manager")
    kueue_build_parser.add_argument("--version", required=True)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (1 with a message on KubeLocalError)."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "up":
            return _up(args)
        if args.command == "down":
            return _down(args.kubeconfig)
        if args.command == "status":
            return _status(args.kubeconfig)
        if args.command == "kueue":
            return _kueue(args)
        if args.command == "kueue-build":
            print(kueue_build.ensure_built(kueue_build.resolve(args.version)))
            return 0
        for component, path in build.ensure_built(resolve(args.version)).items():
            print(f"{component}\t{path}")
        return 0
    except KubeLocalError as error:
        print(f"kube-local: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("kube-local: interrupted", file=sys.stderr)
        return 130


def _up(args: argparse.Namespace) -> int:
    kubeconfig: Path = args.kubeconfig.absolute()
    state_dir = control_plane.state_dir_for(kubeconfig)
    if kubeconfig.exists() and control_plane.read_state(state_dir) is None:
        raise KubeLocalError(
            f"{kubeconfig} exists and was not written by kube-local: not touching it"
        )
    running = [record for record, alive, _ in control_plane.status(state_dir) if alive]
    if running:
        pids = ", ".join(f"{record.name} {record.pid}" for record in running)
        raise KubeLocalError(
            f"a control plane is already running for {kubeconfig} ({pids}):"
            f" `scripts/kube-local down --kubeconfig {kubeconfig}` first"
        )
    started = time.monotonic()
    try:
        plane = control_plane.start(
            args.version,
            kubeconfig,
            state_dir,
            args.team,
            args.feature_gates,
            args.runtime_config,
            die_with_parent=False,
        )
    except BaseException:
        if control_plane.read_state(state_dir) is not None:
            say(f"logs kept in {state_dir / 'logs'}; `down --kubeconfig {kubeconfig}` removes them")
        raise
    phases = ", ".join(f"{name} {seconds:.1f}s" for name, seconds in plane.startup_seconds.items())
    contexts = [f"{ADMIN_CONTEXT} (current)", *(team.context for team in plane.teams)]
    print(
        f"kube-local: Kubernetes {plane.version} is up at {plane.server}"
        f" in {duration(time.monotonic() - started)} ({phases})\n"
        f"  kubeconfig: {kubeconfig}\n"
        f"  contexts:   {', '.join(contexts)}\n"
        f"  kubectl:    {plane.kubectl_binary} (the same release)\n"
        f"  logs:       {state_dir / 'logs'}/\n"
        f"  stop:       scripts/kube-local down --kubeconfig {kubeconfig}"
    )
    return 0


def _down(kubeconfig: Path) -> int:
    kubeconfig = kubeconfig.absolute()
    state_dir = control_plane.state_dir_for(kubeconfig)
    existed = control_plane.read_state(state_dir) is not None
    stopped = control_plane.stop(state_dir, kubeconfig_path=kubeconfig)
    what = f"stopped {', '.join(stopped)}" if stopped else "nothing was running"
    say(f"{what}; removed {kubeconfig} and {state_dir}" if existed else f"{what} for {kubeconfig}")
    return 0


def _kueue(args: argparse.Namespace) -> int:
    kubeconfig: Path = args.kubeconfig.absolute()
    plane = control_plane.attach(control_plane.state_dir_for(kubeconfig))
    started = time.monotonic()
    manager = kueue.start(plane, args.version, args.config, die_with_parent=False, restart=True)
    phases = ", ".join(f"{name} {sec:.1f}s" for name, sec in manager.startup_seconds.items())
    ports = ", ".join(f"{name} {port}" for name, port in manager.ports.items())
    print(
        f"kube-local: Kueue {manager.version} is up for {kubeconfig}"
        f" in {duration(time.monotonic() - started)} ({phases})\n"
        f"  acting as:     {manager.user}\n"
        f"  configuration: {manager.configuration}\n"
        f"  ports:         {ports} (127.0.0.1)\n"
        f"  log:           {manager.log}\n"
        f"  stop:          scripts/kube-local down --kubeconfig {kubeconfig} (stops everything)"
    )
    return 0


def _status(kubeconfig: Path) -> int:
    state_dir = control_plane.state_dir_for(kubeconfig.absolute())
    state = control_plane.read_state(state_dir)
    if state is None:
        print(f"no kube-local control plane for {kubeconfig}")
        return 1
    print(f"Kubernetes {state.get('version')} at {state.get('server')}")
    if kueue.NAME in state:
        print(f"Kueue {state[kueue.NAME].get('version')}")
    rows = control_plane.status(state_dir)
    for record, alive, rss in rows:
        memory = f"{rss / 2**20:.0f} MiB" if rss is not None else "-"
        state_word = "running" if alive else "stopped"
        print(f"  {record.name:<24} pid {record.pid:<8} {state_word:<8} {memory:>9}  {record.log}")
    return 0 if rows and all(alive for _, alive, _ in rows) else 1
