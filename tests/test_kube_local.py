"""scripts/kube-local without a cluster: which release it builds and how, and the flags and
identities it hands the control plane (the real thing runs in `make e2e`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kubelocal import KubeLocalError, resolve
from kubelocal.build import _go_mod, _proxy_only, _staging_modules, cache_root
from kubelocal.config import Team, merge_flag, parse_feature_gates, parse_runtime_config

from compiler.versions import KUBERNETES_VERSIONS

KUBERNETES_GO_MOD = """module k8s.io/kubernetes

go 1.26.0

require k8s.io/api v0.0.0

replace (
\tk8s.io/api => ./staging/src/k8s.io/api
\tk8s.io/client-go => ./staging/src/k8s.io/client-go
)

replace k8s.io/kubectl => ./staging/src/k8s.io/kubectl
replace github.com/example/fork => github.com/example/other v1.0.0
"""


def test_every_targeted_minor_from_1_33_has_a_release() -> None:
    """1.32 is targeted, but its modules are refused by the proxy (docs/cluster-test.md)."""
    for version in KUBERNETES_VERSIONS:
        release = resolve(version)
        assert release.version.startswith(f"v{version}.")
        assert release.staging_version == "v0." + release.number.split(".", 1)[1]
    assert resolve("1.36.1").version == "v1.36.1"
    for wrong in ("1.31", "2.36", "1.36.x", "latest"):
        with pytest.raises(KubeLocalError):
            resolve(wrong)


def test_the_build_module_replaces_each_staging_module_with_its_published_tag(
    tmp_path: Path,
) -> None:
    go_mod = tmp_path / "go.mod"
    go_mod.write_text(KUBERNETES_GO_MOD)
    release = resolve("1.36")
    staging = _staging_modules(json.dumps({"GoMod": str(go_mod)}), release, tmp_path / "log")
    assert staging == ["k8s.io/api", "k8s.io/client-go", "k8s.io/kubectl"]
    text = _go_mod(release, staging)
    assert f"require k8s.io/kubernetes {release.version}" in text
    assert "replace k8s.io/client-go => k8s.io/client-go v0.36." in text
    assert "github.com/example" not in text


def test_modules_come_from_a_proxy_only() -> None:
    assert _proxy_only("https://proxy.golang.org,direct") == "https://proxy.golang.org"
    assert _proxy_only("off") == "https://proxy.golang.org"


def test_the_cache_never_lies_in_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUFLEET_CACHE", str(Path(__file__).parent / "cache"))
    with pytest.raises(KubeLocalError, match="inside the repository"):
        cache_root()


def test_flags_and_identities() -> None:
    assert parse_feature_gates("DRADeviceTaintRules=true, B=false") == {
        "DRADeviceTaintRules": True,
        "B": False,
    }
    assert parse_runtime_config({"resource.k8s.io/v1beta2/devicetaintrules": True}) == {
        "resource.k8s.io/v1beta2/devicetaintrules": "true"
    }
    assert merge_flag({"A": True, "B": True}, {"B": False}) == "A=true,B=false"
    for wrong in ("A", "A=maybe", "bad gate=true"):
        with pytest.raises(KubeLocalError):
            parse_feature_gates(wrong)
    team = Team.parse("ml-research")
    assert (team.group, team.user, team.context) == (
        "gpufleet-team-ml-research",
        "gpufleet-team-ml-research-user",
        "ml-research",
    )
    assert Team.parse("vision=vision-admins").group == "vision-admins"
    with pytest.raises(KubeLocalError):
        Team.parse("admin")
