"""gpufleet installs as users install it: `pip install git+<repository>@<tag>` into a fresh
virtual environment, then `gpufleet --version` and a check of the example fleet run from the
installed package (issue 18). Offline: the dependencies come from this environment (a .pth
line; its own .pth files, the editable install among them, are not read), the build backend
too (--no-build-isolation)."""

from __future__ import annotations

import subprocess
import sysconfig
import venv
from pathlib import Path

from compiler import __version__
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


def test_pip_installs_a_tag_from_git_into_a_fresh_venv(tmp_path: Path) -> None:
    repository = _tagged_repository(tmp_path / "gpufleet")
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
