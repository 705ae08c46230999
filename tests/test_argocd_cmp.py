"""The Config Management Plugin, run as Argo CD's sidecar runs it, prints the committed out/.

Argo CD (cmpserver/plugin/plugin.go) extracts the repository into a temporary directory, runs
plugin.yaml's generate command in the Application's source directory
(`filepath.Clean(workDir + path)`), as user 999, with the sidecar's environment, the build
environment (ARGOCD_APP_SOURCE_PATH, ...) and the Application's `plugin.env` prefixed
ARGOCD_ENV_. These tests do the same on a read-only copy of the repository and compare the
output with the committed out/ byte for byte; a plan that is missing or stale is refused.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from compiler.repository import source_root
from tests.conftest import REPO

CLUSTERS = ("prod-east", "prod-west")
PLUGIN = REPO / "out" / "argocd" / "cmp" / "plugin.yaml"
EXAMPLE_SET = REPO / "examples" / "argocd-cmp" / "applicationset.yaml"


def committed_stream(out: Path, cluster: str) -> str:
    """What the committed out/clusters/<cluster>/ holds, in its kustomization's order: what
    the rendered-manifests pattern syncs, read from the files alone."""
    directory = out / "clusters" / cluster
    listed = yaml.safe_load((directory / "kustomization.yaml").read_text())["resources"]
    return "".join(f"---\n{(directory / name).read_text()}" for name in listed)


def application_source() -> dict[str, Any]:
    """The example ApplicationSet's source (path and plugin env)."""
    example = yaml.safe_load(EXAMPLE_SET.read_text())
    return example["spec"]["template"]["spec"]["source"]  # type: ignore[no-any-return]


READ_ONLY_MOUNT = 'mount --bind -o ro "$0" "$0" && cd -- "$(pwd -P)" && exec "$@"'
"""Run "$@" with the checkout "$0" mounted read-only (in a private mount namespace)."""


def read_only_wrapper(root: Path) -> list[str]:
    """The words that run a command in `root` with `root` read-only, whoever runs the tests:
    a non-root user is kept out by the files' modes; root, whom modes do not stop, gets a
    read-only bind mount of its own (skipped where the kernel does not allow one)."""
    for path in [root, *root.rglob("*")]:
        os.chmod(path, 0o555 if path.is_dir() else 0o444)
    if os.geteuid() != 0:
        return []
    wrapper = ["unshare", "--mount", "sh", "-c", READ_ONLY_MOUNT, str(root)]
    probe = subprocess.run(
        [*wrapper, "sh", "-c", "! touch .probe 2>/dev/null"],
        cwd=root,
        capture_output=True,
        check=False,
    )
    if shutil.which("unshare") is None or probe.returncode != 0:
        pytest.skip("root cannot mount the checkout read-only here")
    return wrapper


@dataclass(frozen=True)
class Sidecar:
    """One repository checkout, as the CMP server extracts it."""

    root: Path
    wrapper: tuple[str, ...] = ()

    def generate(
        self, cluster: str, source_path: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run plugin.yaml's generate command for the example Application of `cluster`, in
        the Application's source directory with Argo CD's environment."""
        source = application_source()
        path = source["path"] if source_path is None else source_path
        generate = yaml.safe_load(PLUGIN.read_text())["spec"]["generate"]
        env = {
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}/usr/local/bin:/usr/bin:/bin",
            "HOME": "/home/argocd",
            "LANG": "C.UTF-8",
            "ARGOCD_APP_NAME": f"gpufleet-{cluster}",
            "ARGOCD_APP_NAMESPACE": "argocd",
            "ARGOCD_APP_REVISION": "0" * 40,
            "ARGOCD_APP_SOURCE_PATH": path,
            "ARGOCD_APP_SOURCE_REPO_URL": source["repoURL"],
            "ARGOCD_APP_SOURCE_TARGET_REVISION": source["targetRevision"],
            "KUBE_VERSION": "1.36",
        }
        for entry in source["plugin"]["env"]:
            env[f"ARGOCD_ENV_{entry['name']}"] = entry["value"].replace("{{.cluster}}", cluster)
        return subprocess.run(
            [*self.wrapper, *generate["command"], *generate["args"]],
            cwd=posixpath.normpath(f"{self.root}/{path}"),
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )

    @classmethod
    def read_only(cls, root: Path) -> Sidecar:
        """A sidecar whose checkout nobody can write."""
        return cls(root, tuple(read_only_wrapper(root)))


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every path below `root` with its bytes (None for a directory)."""
    return {
        str(p.relative_to(root)): None if p.is_dir() else p.read_bytes()
        for p in sorted(root.rglob("*"))
    }


@pytest.fixture
def checkout(tmp_path: Path) -> Iterator[Path]:
    """A checkout of the repository (policies/ and out/), made writable again afterwards."""
    root = tmp_path / "repo"
    root.mkdir()
    shutil.copytree(REPO / "policies", root / "policies")
    shutil.copytree(REPO / "out", root / "out")
    yield root
    for path in [root, *root.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)


def test_the_plugin_prints_the_committed_out_of_every_cluster_from_a_read_only_checkout(
    checkout: Path,
) -> None:
    sidecar = Sidecar.read_only(checkout)
    before = snapshot(checkout)
    for cluster in CLUSTERS:
        done = sidecar.generate(cluster)
        assert done.returncode == 0, done.stderr
        assert done.stdout == committed_stream(REPO / "out", cluster), cluster
    assert snapshot(checkout) == before


def test_the_plugin_finds_out_from_a_nested_source_path(checkout: Path) -> None:
    """The policies two levels down (`platform/policies`, written `./platform/policies/`):
    out/ is still found at the repository root, where the fleet's gitops.path says."""
    (checkout / "platform").mkdir()
    (checkout / "policies").rename(checkout / "platform" / "policies")
    done = Sidecar(checkout).generate("prod-east", source_path="./platform/policies/")
    assert done.returncode == 0, done.stderr
    assert done.stdout == committed_stream(REPO / "out", "prod-east")


def test_the_plugin_renders_the_committed_plan_where_a_new_plan_would_differ(
    checkout: Path,
) -> None:
    """The issue's case: a reviewed change compiled over the previous plan (MIG layouts kept
    stable) gives other cohort quotas in prod-east than planning afresh would. The plugin
    prints the committed ones; it used to re-plan without out/ and print the fresh ones."""
    team = checkout / "policies" / "teams" / "llm-serving.yaml"
    team.write_text(team.read_text().replace("guaranteed: 48", "guaranteed: 40"))
    gpufleet = Path(sys.executable).parent / "gpufleet"
    for out in ("out", "fresh"):
        subprocess.run(
            [gpufleet, "compile", "--policies", "policies", "--out", out],
            cwd=checkout,
            capture_output=True,
            check=True,
            timeout=120,
        )
    cohort = "clusters/prod-east/_cluster/cohort_prod-east.yaml"
    assert (checkout / "out" / cohort).read_text() != (checkout / "fresh" / cohort).read_text()
    shutil.rmtree(checkout / "fresh")
    done = Sidecar.read_only(checkout).generate("prod-east")
    assert done.returncode == 0, done.stderr
    assert done.stdout == committed_stream(checkout / "out", "prod-east")


def test_a_stale_plan_is_refused_not_replanned(checkout: Path) -> None:
    """A policy changed after out/ was compiled: printing a fresh plan would sync what no pull
    request reviewed, so the plugin fails the sync with GF501 and prints nothing."""
    grant = checkout / "policies" / "grants" / "ml-research.yaml"
    text = grant.read_text()
    assert "guaranteed: 64, limit: 96" in text
    grant.write_text(text.replace("guaranteed: 64, limit: 96", "guaranteed: 56, limit: 96"))
    done = Sidecar.read_only(checkout).generate("prod-east")
    assert done.returncode == 1
    assert done.stdout == ""
    assert "error[GF501]" in done.stderr and "gpufleet compile" in done.stderr


@pytest.mark.parametrize("missing", ["out/plan/prod-east.json", "out"])
def test_a_missing_plan_is_refused_not_replanned(checkout: Path, missing: str) -> None:
    target = checkout / missing
    shutil.rmtree(target) if target.is_dir() else target.unlink()
    done = Sidecar.read_only(checkout).generate("prod-east")
    assert done.returncode == 1
    assert done.stdout == ""
    assert "error[GF501]" in done.stderr and "plan/prod-east.json" in done.stderr


def test_a_source_path_that_is_not_the_working_directory_is_refused(checkout: Path) -> None:
    """ARGOCD_APP_SOURCE_PATH names where the generate command runs: if it does not, the
    repository root (and so out/) is unknown, and guessing could read another out/."""
    generate = yaml.safe_load(PLUGIN.read_text())["spec"]["generate"]
    done = subprocess.run(
        [*generate["command"], *generate["args"]],
        cwd=checkout / "policies",
        env={
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}/usr/bin:/bin",
            "ARGOCD_APP_SOURCE_PATH": "fleet/policies",
            "ARGOCD_ENV_GPUFLEET_CLUSTER": "prod-east",
        },
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert "error[GF113]" in done.stderr and "fleet/policies" in done.stderr


@pytest.mark.parametrize(
    ("here", "source", "root"),
    [
        ("/w/repo/policies", "policies", "/w/repo"),
        ("/w/repo/a/b/policies", "./a/b/policies/", "/w/repo"),
        ("/w/repo", "", "/w/repo"),
        ("/w/repo", ".", "/w/repo"),
        ("/w/repo/policies", "other", None),
        ("/w/repo/policies", "../policies", None),
        ("/w/repo/policies", "/w/repo/policies", None),
        ("/policies", "policies", "/"),
        ("/", "policies", None),
        ("/w/repo/xpolicies", "policies", None),
    ],
)
def test_the_repository_root_is_the_working_directory_without_the_source_path(
    here: str, source: str, root: str | None
) -> None:
    found = source_root(Path(here), source)
    assert (None if found is None else found.as_posix()) == root
