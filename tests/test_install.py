"""gpufleet installs as users install it, from a tag of its git repository into a fresh
environment, then `gpufleet --version` runs from the installed package (issue 18):

- `pip install git+<repository>@<tag>` into a fresh venv, its dependencies from this
  environment (a .pth line; its own .pth files, the editable install among them, are not read),
  the build backend too (--no-build-isolation);
- `pipx install git+<repository>@<tag>` with a fresh PIPX_HOME, exactly as a user runs it
  (build isolation, every dependency installed into pipx's venv), pip's index switched off and
  the wheels found in the wheelhouse that `make wheelhouse` made (tests/wheelhouse.py).

Both offline: the repository is a local clone, and nothing is fetched."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from compiler import __version__
from tests import wheelhouse
from tests.conftest import REPO


def _run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run a command; in a directory of its own, so that no `compiler/` in the working
    directory shadows the installed package."""
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def _tagged_repository(target: Path) -> Path:
    """A git repository holding this working tree's tracked files, tagged v<version>."""
    files = _run("git", "ls-files", "-z", cwd=REPO).stdout.split("\0")
    for name in filter(None, files):
        source = REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            (target / name).write_bytes(source.read_bytes())
    git = ("git", "-c", "user.name=t", "-c", "user.email=t@example.com")
    for step in (("init", "-q"), ("add", "-A"), ("commit", "-qm", "release")):
        assert _run(*git, *step, cwd=target).returncode == 0
    assert _run(*git, "tag", f"v{__version__}", cwd=target).returncode == 0
    return target


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One tagged repository for both installers."""
    return _tagged_repository(tmp_path_factory.mktemp("gpufleet"))


def test_pip_installs_a_tag_from_git_into_a_fresh_venv(repository: Path, tmp_path: Path) -> None:
    fresh = tmp_path / "venv"
    venv.create(fresh, with_pip=True)
    site = Path(
        _run(
            fresh / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"
        ).stdout.strip()
    )
    (site / "dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    installed = _run(
        fresh / "bin" / "python",
        "-m",
        "pip",
        "install",
        "--quiet",
        "--no-deps",
        "--no-index",
        "--no-build-isolation",
        f"git+file://{repository}@v{__version__}",
    )
    assert installed.returncode == 0, installed.stderr
    version = _run(fresh / "bin" / "gpufleet", "--version", cwd=tmp_path)
    assert version.stdout == f"gpufleet {__version__}\n", version.stderr
    where = _run(
        fresh / "bin" / "python", "-c", "import compiler; print(compiler.__file__)", cwd=tmp_path
    )
    assert Path(where.stdout.strip()).is_relative_to(site), where
    checked = _run(fresh / "bin" / "gpufleet", "check", "--policies", repository / "policies")
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.startswith("ok: "), checked.stdout


def _offline_pipx_environment(home: Path, wheels: Path) -> dict[str, str]:
    """This process's environment without its pip, pipx and PYTHONPATH settings, with pipx's
    home, bin and man directories under ``home``, the shared libraries' pip left as ensurepip
    makes it (its upgrade needs an index), and pip (in pipx's venvs and in their isolated build
    environments alike) finding every wheel in ``wheels`` and nothing on an index."""
    environment = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("PIP_", "PIPX_")) and name != "PYTHONPATH"
    }
    return environment | {
        "PIPX_HOME": str(home / "pipx"),
        "PIPX_BIN_DIR": str(home / "bin"),
        "PIPX_MAN_DIR": str(home / "man"),
        "PIPX_DISABLE_SHARED_LIBS_AUTO_UPGRADE": "1",
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheels),
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_CACHE_DIR": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }


def test_pipx_installs_a_tag_from_git(repository: Path, tmp_path: Path) -> None:
    wheels = wheelhouse.ready()
    if wheels is None:
        reason = f"no wheelhouse for this requirements.lock: `{wheelhouse.MAKE_TARGET}` makes it"
        if os.environ.get("GPUFLEET_WHEELHOUSE") == "required":
            pytest.fail(reason)
        pytest.skip(reason)
    environment = _offline_pipx_environment(tmp_path, wheels)
    installed = subprocess.run(
        [sys.executable, "-m", "pipx", "install", f"git+file://{repository}@v{__version__}"],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    command = tmp_path / "bin" / "gpufleet"
    assert command.resolve().is_relative_to(tmp_path / "pipx" / "venvs" / "gpufleet"), command
    version = _run(command, "--version", cwd=tmp_path)
    assert version.stdout == f"gpufleet {__version__}\n", version.stderr
    checked = _run(command, "check", "--policies", repository / "policies", cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.startswith("ok: "), checked.stdout
