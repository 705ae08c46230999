"""Which Kubernetes releases kube-local builds, and what each needs switched on.

The table below is the one place that names exact patch releases: the newest patch of each
supported minor on the Go module proxy when it was written. Bump a patch here and nowhere else.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from kubelocal.errors import KubeLocalError


@dataclass(frozen=True)
class Release:
    """One Kubernetes release, and the flags its control plane needs for gpufleet's APIs."""

    minor: int
    version: str
    """The exact tag, e.g. ``v1.36.3``."""
    feature_gates: Mapping[str, bool] = field(default_factory=dict)
    """Gates both kube-apiserver and kube-controller-manager get before the user's own."""
    runtime_config: Mapping[str, str] = field(default_factory=dict)
    """kube-apiserver ``--runtime-config`` entries applied before the user's own."""

    @property
    def number(self) -> str:
        """The version without the leading ``v`` (``1.36.3``): the cache directory's name."""
        return self.version.removeprefix("v")

    @property
    def staging_version(self) -> str:
        """The tag of the published staging modules (k8s.io/api etc.): ``v0.36.3`` for 1.36.3."""
        return "v0." + self.number.split(".", 1)[1]


_DRA_BETA_GATE = {"DynamicResourceAllocation": True}

RELEASES: dict[int, Release] = {
    release.minor: release
    for release in (
        # DRA is beta and off by default before 1.34: the gate and the beta API groups are needed.
        Release(32, "v1.32.13", _DRA_BETA_GATE, {"resource.k8s.io/v1beta1": "true"}),
        Release(
            33,
            "v1.33.13",
            _DRA_BETA_GATE,
            {"resource.k8s.io/v1beta1": "true", "resource.k8s.io/v1beta2": "true"},
        ),
        # From 1.34 DRA is GA: resource.k8s.io/v1 is served by default.
        Release(34, "v1.34.4"),
        Release(35, "v1.35.4"),
        Release(36, "v1.36.3"),
        Release(37, "v1.37.2"),
    )
}

_VERSION = re.compile(r"^v?1\.(\d+)(?:\.(\d+))?$")


def resolve(version: str) -> Release:
    """The release for ``1.36``/``v1.36`` (newest known patch) or an exact ``1.36.2``/``v1.36.2``.

    Raises KubeLocalError for a malformed version or a minor outside the supported range.
    """
    match = _VERSION.match(version.strip())
    if match is None:
        raise KubeLocalError(f"version {version!r}: expected MAJOR.MINOR like 1.36 (or 1.36.3)")
    minor = int(match.group(1))
    if minor not in RELEASES:
        supported = ", ".join(f"1.{m}" for m in sorted(RELEASES))
        raise KubeLocalError(f"version {version!r}: supported minors are {supported}")
    release = RELEASES[minor]
    if match.group(2) is not None:
        release = replace(release, version=f"v1.{minor}.{int(match.group(2))}")
    return release
