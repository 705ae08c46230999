"""Which Kueue releases kube-local runs, and building ``sigs.k8s.io/kueue/cmd/kueue`` from the Go
module proxy, cached per release.

The recipe: a throwaway main module requiring ``sigs.k8s.io/kueue vX.Y.Z`` (whose go.mod has no
replace directives), its go.sum seeded with Kueue's own (the checksum database does not know every
module Kueue pins, e.g. ``sigs.k8s.io/scheduler-library v0.1.0-alpha1``: Kueue's go.sum vouches for
it instead), ``go mod tidy``, ``go build`` with the version stamped. The binary lands in
``${GPUFLEET_CACHE:-~/.cache/gpufleet}/kueue/<X.Y.Z>/bin/kueue``. Go environment, locking and
progress lines are build.py's, shared with the Kubernetes build.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from kubelocal import build
from kubelocal.errors import KubeLocalError
from kubelocal.progress import duration, say

MODULE = "sigs.k8s.io/kueue"
COMMAND = f"{MODULE}/cmd/kueue"


@dataclass(frozen=True)
class KueueRelease:
    """One Kueue release."""

    version: str
    """The exact tag, e.g. ``v0.19.2``."""

    @property
    def number(self) -> str:
        """The version without the leading ``v``: the cache directory's name."""
        return self.version.removeprefix("v")

    @property
    def minor(self) -> str:
        """``0.19`` for v0.19.2."""
        return ".".join(self.number.split(".")[:2])


RELEASES: dict[str, KueueRelease] = {
    release.minor: release
    for release in (
        # v0.18.5 and v0.18.6 exist, but the module proxy refuses them (403).
        KueueRelease("v0.18.4"),
        KueueRelease("v0.19.2"),
    )
}
"""The exact release of each supported minor: the newest the Go module proxy serves. Bump a patch
here and nowhere else."""

_VERSION = re.compile(r"^v?0\.(\d+)(?:\.(\d+))?$")


def resolve(version: str) -> KueueRelease:
    """The release for ``0.19``/``v0.19`` (the table's patch) or an exact ``0.19.1``/``v0.19.1``.

    Raises KubeLocalError for a malformed version or a minor outside the table.
    """
    match = _VERSION.match(version.strip())
    if match is None:
        raise KubeLocalError(f"Kueue version {version!r}: expected 0.MINOR like 0.19 (or 0.19.2)")
    minor = f"0.{int(match.group(1))}"
    if minor not in RELEASES:
        raise KubeLocalError(
            f"Kueue version {version!r}: supported minors are {', '.join(sorted(RELEASES))}"
        )
    if match.group(2) is None:
        return RELEASES[minor]
    return KueueRelease(f"v{minor}.{int(match.group(2))}")


def release_dir(release: KueueRelease) -> Path:
    """Where one release's build module, build log and binary live."""
    return build.cache_root() / "kueue" / release.number


def binary(release: KueueRelease) -> Path:
    """The cached path of the manager binary (built or not)."""
    return release_dir(release) / "bin" / "kueue"


def ensure_built(release: KueueRelease) -> Path:
    """Build the manager of ``release`` unless cached, and return its path.

    Concurrent calls serialise on a lock file; KubeLocalError (with the build log's tail) if the
    build fails.
    """
    if not os.access(binary(release), os.X_OK):
        directory = release_dir(release)
        directory.mkdir(parents=True, exist_ok=True)
        with build.locked(directory / ".lock", f"Kueue {release.version}"):
            if not os.access(binary(release), os.X_OK):
                _build(release, directory)
    return binary(release)


def source_dir(release: KueueRelease) -> Path:
    """The module's source tree in the Go module cache (downloaded through the proxy if missing):
    its ``config/`` holds the CRDs, RBAC and webhook configurations of that exact release."""
    env = build.go_environment()
    log = release_dir(release) / "download.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(f"# kube-local: source of Kueue {release.version}\n")
    info = build.run_go(
        ["go", "mod", "download", "-json", f"{MODULE}@{release.version}"],
        log.parent,
        env,
        log,
        f"downloading {MODULE} {release.version}",
        capture=True,
    )
    try:
        directory = Path(json.loads(info)["Dir"])
    except (ValueError, KeyError, TypeError):
        raise build.failure(
            f"`go mod download` gave no directory for {release.version}", log
        ) from None
    if not (directory / "go.mod").is_file():
        raise build.failure(f"{directory} holds no go.mod", log)
    return directory


def _build(release: KueueRelease, directory: Path) -> None:
    env, src, log = build.start_build(directory, f"Kueue {release.version}")
    (src / "go.mod").write_text(_go_mod(release))
    (src / "tools.go").write_text(f'//go:build tools\n\npackage tools\n\nimport _ "{COMMAND}"\n')
    kueue_sum = source_dir(release) / "go.sum"
    (src / "go.sum").write_bytes(kueue_sum.read_bytes() if kueue_sum.is_file() else b"")
    build.run_go(
        ["go", "mod", "tidy"], src, env, log, f"resolving modules for Kueue {release.version}"
    )
    say(f"building Kueue {release.version} (the first build takes ~5 min on 2 cores)")
    tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=directory))
    try:
        started = time.monotonic()
        built = tmp / "kueue"
        build.run_go(
            ["go", "build", "-v", "-o", str(built), "-ldflags", _ldflags(release), COMMAND],
            src,
            env,
            log,
            f"building Kueue {release.version}",
            count_packages=True,
        )
        if not built.is_file():
            raise build.failure("go build left no kueue binary", log)
        bin_dir = directory / "bin"
        bin_dir.mkdir(exist_ok=True)
        os.replace(built, binary(release))
        say(f"built Kueue {release.version} in {duration(time.monotonic() - started)}: {bin_dir}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _go_mod(release: KueueRelease) -> str:
    return (
        f"module gpufleet.local/kueuebuild\n\ngo {build.GO_MINOR}.0\n\n"
        f"require {MODULE} {release.version}\n"
    )


def _ldflags(release: KueueRelease) -> str:
    return f"-X {MODULE}/pkg/version.GitVersion={release.version}"
