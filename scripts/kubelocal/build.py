"""Build kube-apiserver, kube-controller-manager and kubectl from the Go module proxy, cached per
version (kubectl of the same release: no client/server skew, and no system kubectl needed).

The recipe: a throwaway main module that requires ``k8s.io/kubernetes vX.Y.Z`` and replaces every
``k8s.io/*`` module that k8s.io/kubernetes's own go.mod points at ``./staging/src/...`` with its
published tag ``v0.Y.Z``; ``go mod tidy``; ``go build`` with the version stamped by ``-ldflags``.
Binaries land in ``${GPUFLEET_CACHE:-~/.cache/gpufleet}/kube/<X.Y.Z>/bin/``, never in the repo.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO

from kubelocal.errors import KubeLocalError
from kubelocal.progress import duration, say
from kubelocal.releases import Release

COMPONENTS = ("kube-apiserver", "kube-controller-manager", "kubectl")
GO_MINOR = "1.26"
"""The only Go minor accepted: Go 1.27 builds serve a broken /openapi/v2 (jsonv2 by default)."""
PROGRESS_EVERY = 15.0
_REPO = Path(__file__).resolve().parents[2]
_STAGING = re.compile(r"^\s*(?:replace\s+)?(k8s\.io/[\w.\-/]+)\s+=>\s+\./staging/src/")
_PACKAGE_LINE = re.compile(r"^[\w.\-~]+(?:/[\w.\-~+]+)*$")


def cache_root() -> Path:
    """``$GPUFLEET_CACHE`` or ``~/.cache/gpufleet``; KubeLocalError if it lies inside the repo."""
    root = Path(os.environ.get("GPUFLEET_CACHE") or Path.home() / ".cache" / "gpufleet")
    root = root.expanduser().resolve()
    if root == _REPO or _REPO in root.parents:
        raise KubeLocalError(f"cache {root} is inside the repository {_REPO}: point it elsewhere")
    return root


def release_dir(release: Release) -> Path:
    """Where one release's sources, build log and binaries live."""
    return cache_root() / "kube" / release.number


def binary(release: Release, component: str) -> Path:
    """The cached path of one component's binary (built or not)."""
    return release_dir(release) / "bin" / component


def missing(release: Release) -> list[str]:
    """The components of ``release`` not in the cache yet."""
    return [c for c in COMPONENTS if not os.access(binary(release, c), os.X_OK)]


def ensure_built(release: Release) -> dict[str, Path]:
    """Build whatever of ``release`` is not cached yet, and return every component's binary.

    Concurrent calls for the same release serialise on a lock file; the second finds the binaries
    the first built. Raises KubeLocalError (with the build log's tail) if the build fails.
    """
    if missing(release):
        directory = release_dir(release)
        directory.mkdir(parents=True, exist_ok=True)
        with locked(directory / ".lock", f"Kubernetes {release.version}"):
            todo = missing(release)
            if todo:
                _build(release, directory, todo)
    return {component: binary(release, component) for component in COMPONENTS}


@contextlib.contextmanager
def locked(path: Path, what: str) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` for a build of ``what``, waiting (and saying so) while
    another process holds it."""
    with path.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"waiting for another build of {what} to finish (lock {path})")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def go_environment() -> dict[str, str]:
    """The environment for every go command: local toolchain, -mod=mod, only the module proxy."""
    env = dict(os.environ)
    env.update(GOTOOLCHAIN="local", GOFLAGS="-mod=mod", GOPRIVATE="", GONOPROXY="", GOWORK="off")
    env["GOPROXY"] = _proxy_only(env.get("GOPROXY") or _go_env_value(env, "GOPROXY"))
    return env


def _proxy_only(goproxy: str) -> str:
    """GOPROXY without ``direct`` and ``off``: modules come from a proxy or not at all."""
    proxies = [p for p in re.split(r"[,|]", goproxy) if p.strip() and p not in ("direct", "off")]
    return ",".join(proxies) or "https://proxy.golang.org"


def _go_env_value(env: dict[str, str], name: str) -> str:
    try:
        done = subprocess.run(
            ["go", "env", name], env=env, capture_output=True, text=True, check=True
        )
    except FileNotFoundError:
        raise KubeLocalError(f"go is not on PATH: install Go {GO_MINOR}.x") from None
    except subprocess.CalledProcessError as error:
        raise KubeLocalError(f"`go env {name}` failed: {error.stderr.strip()}") from None
    return done.stdout.strip()


def check_go(env: dict[str, str]) -> str:
    """The Go version (``go1.26.8``); KubeLocalError unless it is Go 1.26.x (every kube-local
    build, Kubernetes' and Kueue's, uses the same Go)."""
    version = _go_env_value(env, "GOVERSION")
    if not re.match(rf"^go{re.escape(GO_MINOR)}(\.|rc|$)", version):
        raise KubeLocalError(
            f"Go {GO_MINOR}.x is required, found {version}: a Kubernetes built with Go 1.27"
            " serves a broken /openapi/v2 (kubectl cannot validate or apply); other Go"
            " versions are untested"
        )
    return version


def start_build(directory: Path, what: str) -> tuple[dict[str, str], Path, Path]:
    """The go environment, the source directory and a fresh log for one build of ``what``."""
    env = go_environment()
    go_version = check_go(env)
    src = directory / "src"
    src.mkdir(exist_ok=True)
    log = directory / "build.log"
    log.write_text(f"# kube-local build of {what} with {go_version}\n")
    say(f"downloading modules for {what} (log: {log})")
    return env, src, log


def _build(release: Release, directory: Path, components: Sequence[str]) -> None:
    env, src, log = start_build(directory, release.version)
    (src / "go.mod").write_text(_go_mod(release, []))
    (src / "go.sum").unlink(missing_ok=True)
    info = run_go(
        ["go", "mod", "download", "-json", f"k8s.io/kubernetes@{release.version}"],
        src,
        env,
        log,
        f"downloading k8s.io/kubernetes {release.version}",
        capture=True,
    )
    staging = _staging_modules(info, release, log)
    (src / "go.mod").write_text(_go_mod(release, staging))
    (src / "tools.go").write_text(_tools_go())
    run_go(["go", "mod", "tidy"], src, env, log, f"resolving modules for {release.version}")
    say(f"building {', '.join(components)} {release.version} (first build takes ~8 min on 2 cores)")
    tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=directory))
    try:
        started = time.monotonic()
        run_go(
            [
                "go",
                "build",
                "-v",
                "-o",
                f"{tmp}/",
                "-ldflags",
                _ldflags(release),
                *(f"k8s.io/kubernetes/cmd/{component}" for component in components),
            ],
            src,
            env,
            log,
            f"building {release.version}",
            count_packages=True,
        )
        bin_dir = directory / "bin"
        bin_dir.mkdir(exist_ok=True)
        for component in components:
            built = tmp / component
            if not built.is_file():
                raise failure(f"go build left no {component}", log)
            os.replace(built, bin_dir / component)
        say(f"built {release.version} in {duration(time.monotonic() - started)}: {bin_dir}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _go_mod(release: Release, staging: Sequence[str]) -> str:
    lines = [
        "module gpufleet.local/kubebuild",
        "",
        f"go {GO_MINOR}.0",
        "",
        f"require k8s.io/kubernetes {release.version}",
        "",
    ]
    lines += [f"replace {m} => {m} {release.staging_version}" for m in staging]
    return "\n".join(lines) + "\n"


def _tools_go() -> str:
    imports = "\n".join(f'\t_ "k8s.io/kubernetes/cmd/{c}"' for c in COMPONENTS)
    return f"//go:build tools\n\npackage tools\n\nimport (\n{imports}\n)\n"


def _ldflags(release: Release) -> str:
    _, minor, _ = release.number.split(".")
    base = "-X k8s.io/component-base/version."
    return " ".join(
        (
            f"{base}gitVersion={release.version}",
            f"{base}gitMajor=1",
            f"{base}gitMinor={minor}",
            f"{base}gitTreeState=clean",
        )
    )


def _staging_modules(info: str, release: Release, log: Path) -> list[str]:
    """The k8s.io modules that k8s.io/kubernetes's own go.mod replaces with ./staging/src."""
    try:
        go_mod = Path(json.loads(info)["GoMod"])
    except (ValueError, KeyError, TypeError):
        raise failure(f"`go mod download` gave no go.mod for {release.version}", log) from None
    modules = [
        m.group(1) for line in go_mod.read_text().splitlines() if (m := _STAGING.match(line))
    ]
    if not modules:
        raise failure(f"{go_mod} names no ./staging/src modules", log)
    return modules


def run_go(
    argv: list[str],
    cwd: Path,
    env: dict[str, str],
    log: Path,
    label: str,
    *,
    capture: bool = False,
    count_packages: bool = False,
) -> str:
    """Run a go command with its output appended to ``log`` and a progress line every 15 s.

    Returns its stdout when ``capture`` (stderr still goes to the log). On failure raises
    KubeLocalError naming the log and quoting its last 30 lines.
    """
    with log.open("a") as sink:
        sink.write(f"\n$ {shlex.join(argv)}\n")
        sink.flush()
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if capture else subprocess.STDOUT,
            text=True,
        )
        captured: list[str] = []
        compiled = [0]
        lock = threading.Lock()

        def pump(stream: IO[str] | None, keep: bool) -> None:
            if stream is None:
                return
            for line in iter(stream.readline, ""):
                with lock:
                    if keep:
                        captured.append(line)
                    sink.write(line)
                    sink.flush()
                    if count_packages and _PACKAGE_LINE.match(line.strip()):
                        compiled[0] += 1

        threads = [threading.Thread(target=pump, args=(process.stdout, capture), daemon=True)]
        if capture:
            threads.append(threading.Thread(target=pump, args=(process.stderr, False), daemon=True))
        for thread in threads:
            thread.start()
        started = time.monotonic()
        try:
            while True:
                try:
                    process.wait(timeout=PROGRESS_EVERY)
                    break
                except subprocess.TimeoutExpired:
                    elapsed = duration(time.monotonic() - started)
                    if count_packages:
                        say(f"{label}: {compiled[0]} packages compiled, {elapsed}")
                    else:
                        say(f"{label}: {elapsed}")
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            for thread in threads:
                thread.join(timeout=5)
    if process.returncode != 0:
        raise failure(f"`{' '.join(argv[:3])}` failed (exit {process.returncode})", log)
    return "".join(captured)


_REFUSED = re.compile(r"(\S+@v[\w.\-+]+): reading \S+: 403 Forbidden")


def failure(what: str, log: Path) -> KubeLocalError:
    """A build error naming ``log`` and quoting its tail, and any module the proxy refused."""
    text = log.read_text(errors="replace") if log.exists() else ""
    lines = text.splitlines()[-30:]
    tail = "\n".join(f"    {line}" for line in lines)
    refused = sorted(set(_REFUSED.findall(text)))
    hint = (
        f"\nThe module proxy does not serve {', '.join(refused)}: this release cannot be"
        " built here."
        if refused
        else ""
    )
    return KubeLocalError(
        f"build failed: {what}; log {log}, last {len(lines)} lines:\n{tail}{hint}"
    )
