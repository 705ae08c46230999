"""The wheelhouse: gpufleet's runtime dependencies and its build backend as wheels, pinned by
requirements.lock, so that tests/test_install.py can install gpufleet as users do (pipx, pip
building the package in an isolated environment) with pip's index switched off.

It is made at set-up time, with PyPI: `make wheelhouse`, which `make test` runs first, calls
`python -m tests.wheelhouse` (PYTHONPATH=scripts). It lives outside the repository, in
``${GPUFLEET_CACHE:-~/.cache/gpufleet}/wheels/<key>/``, where the key hashes requirements.lock
and the requirements it is made of (pyproject.toml's runtime dependencies and build backend):
a change to either makes a new one, and an unchanged lock reuses it (about 77 MB).
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from kubelocal.build import cache_root

REPO = Path(__file__).resolve().parent.parent
LOCK = REPO / "requirements.lock"
MAKE_TARGET = "make wheelhouse"
"""What builds it, for the line a test skips with when it is missing."""


def requirements() -> list[str]:
    """What an install of gpufleet from source needs: its runtime dependencies and the build
    backend, as pyproject.toml pins them."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    return [*project["project"]["dependencies"], *project["build-system"]["requires"]]


def directory() -> Path:
    """Where the wheelhouse of this requirements.lock and these requirements lives (built or
    not)."""
    digest = hashlib.sha256(LOCK.read_bytes())
    digest.update("\n".join(requirements()).encode())
    return cache_root() / "wheels" / digest.hexdigest()[:16]


def ready() -> Path | None:
    """The wheelhouse's directory if it has been built, else None. A directory is complete
    once it exists: it is built beside it and renamed into place."""
    path = directory()
    return path if path.is_dir() else None


def build() -> Path:
    """Build the wheelhouse unless it is there already, and return its directory.

    `pip wheel` downloads (or builds) a wheel of every requirement and of everything they
    depend on, constrained to requirements.lock's versions. A concurrent build of the same
    wheelhouse is harmless: the first rename wins and the other's copy is removed.
    """
    target = directory()
    if target.is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    print(f"wheelhouse: downloading wheels into {target}", file=sys.stderr, flush=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        subprocess.run(
            [
                sys.executable,
                *("-m", "pip", "wheel", "--quiet", "--disable-pip-version-check"),
                *("--wheel-dir", str(staging), "--constraint", str(LOCK)),
                *requirements(),
            ],
            check=True,
        )
        try:
            staging.rename(target)
        except OSError:
            if not target.is_dir():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


if __name__ == "__main__":
    try:
        build()
    except subprocess.CalledProcessError as failed:
        sys.exit(f"wheelhouse: pip wheel failed (exit {failed.returncode})")
