"""The plugin sidecar's image and its registration agree with the emitted plugin and with what
Argo CD requires (user 999, plugin.yaml at /home/argocd/cmp-server/config/, argocd-cmp-server
as entrypoint, a /tmp of its own). The image itself is not built here: that needs the network.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from compiler import __version__
from compiler.emit.argocd import CMP_DIR
from compiler.pipeline import Compiled
from tests.conftest import REPO

DOCKERFILE = REPO / "deploy" / "argocd-cmp" / "Dockerfile"
PATCH = REPO / "examples" / "argocd-cmp" / "repo-server-patch.yaml"
CONFIG = "/home/argocd/cmp-server/config/plugin.yaml"
ARGOCD_USER = 999


def instructions(path: Path) -> list[tuple[str, str]]:
    """The Dockerfile's (INSTRUCTION, arguments), continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n\s*", " ", path.read_text())
    lines = [line.strip() for line in text.splitlines()]
    return [
        (words[0].upper(), words[1] if len(words) > 1 else "")
        for words in (line.split(None, 1) for line in lines if line and not line.startswith("#"))
    ]


def arg_defaults(steps: list[tuple[str, str]]) -> dict[str, str]:
    return dict(value.split("=", 1) for op, value in steps if op == "ARG" and "=" in value)


def test_the_image_runs_as_argo_cds_user_with_the_emitted_plugin_in_place(
    compiled_example: Compiled,
) -> None:
    steps = instructions(DOCKERFILE)
    args = arg_defaults(steps)
    final = steps[max(i for i, (op, _) in enumerate(steps) if op == "FROM") :]
    assert [value for op, value in final if op == "USER"][-1] == str(ARGOCD_USER)
    assert f"--uid {ARGOCD_USER}" in next(v for op, v in final if op == "RUN" and "useradd" in v)
    copies = [value.split() for op, value in final if op == "COPY" and "--from" not in value]
    assert copies == [["${PLUGIN_YAML}", CONFIG]]
    emitted = f"{compiled_example.fleet.fleet.spec.gitops.path}/{CMP_DIR}/plugin.yaml"  # type: ignore[union-attr]
    assert args["PLUGIN_YAML"] == emitted
    assert (REPO / emitted).read_text() == compiled_example.tree[f"{CMP_DIR}/plugin.yaml"]


def test_the_image_pins_python_and_installs_the_released_tag() -> None:
    steps = instructions(DOCKERFILE)
    args = arg_defaults(steps)
    assert re.fullmatch(r"python:3\.11\.\d+-slim-[a-z]+", args["PYTHON_IMAGE"])
    assert all(value.split()[0] == "${PYTHON_IMAGE}" for op, value in steps if op == "FROM")
    assert args["GPUFLEET_TAG"] == f"v{__version__}"  # the release checklist bumps both
    install = next(v for op, v in steps if op == "RUN" and "pip install" in v)
    assert "git+${GPUFLEET_REPO}@${GPUFLEET_TAG}" in install


def sidecar() -> dict[str, Any]:
    (container,) = yaml.safe_load(PATCH.read_text())["spec"]["template"]["spec"]["containers"]
    return container  # type: ignore[no-any-return]


def test_the_repo_server_patch_registers_the_sidecar_as_argo_cd_requires() -> None:
    container = sidecar()
    assert container["command"] == ["/var/run/argocd/argocd-cmp-server"]
    assert container["securityContext"]["runAsUser"] == ARGOCD_USER
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    assert mounts.keys() == {"/var/run/argocd", "/home/argocd/cmp-server/plugins", "/tmp"}
    assert mounts["/tmp"] != "tmp"  # never the repo-server's own /tmp volume
    assert container["image"].endswith(f":v{__version__}")
