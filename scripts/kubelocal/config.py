"""What the user asks for: teams, feature gates and runtime-config, parsed and checked."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kubelocal.errors import KubeLocalError

ADMIN_CONTEXT = "admin"
"""The kubeconfig context (and the current one) that acts as cluster admin."""
ADMIN_USER = "kube-local-admin"
ADMIN_GROUP = "system:masters"

_TEAM_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_GROUP = re.compile(r"^[A-Za-z0-9][A-Za-z0-9:._@+-]{0,127}$")
_GATE = re.compile(r"^[A-Za-z0-9]+$")
_RUNTIME_KEY = re.compile(r"^[a-z0-9./-]+$")


@dataclass(frozen=True)
class Team:
    """A team's identity: a client certificate whose CN is ``user`` and whose O is ``group``."""

    name: str
    group: str

    @property
    def user(self) -> str:
        """The Kubernetes user name of the team's certificate: ``gpufleet-team-<name>-user``."""
        return f"gpufleet-team-{self.name}-user"

    @property
    def context(self) -> str:
        """The kubeconfig context that acts as this team: the team's name itself."""
        return self.name

    @classmethod
    def parse(cls, spec: str) -> Team:
        """``NAME`` (group ``gpufleet-team-NAME``) or ``NAME=GROUP``; KubeLocalError if invalid."""
        name, sep, group = spec.partition("=")
        name = name.strip()
        group = group.strip() if sep else f"gpufleet-team-{name}"
        if not _TEAM_NAME.match(name):
            raise KubeLocalError(
                f"team {spec!r}: the name must be a DNS label (lower case letters, digits, '-')"
            )
        if name == ADMIN_CONTEXT:
            raise KubeLocalError(f"team {spec!r}: {ADMIN_CONTEXT!r} is the admin context's name")
        if not _GROUP.match(group):
            raise KubeLocalError(
                f"team {spec!r}: the group must be letters, digits and ':._@+-' (no spaces)"
            )
        return cls(name, group)


def parse_teams(specs: Iterable[str | Team]) -> tuple[Team, ...]:
    """Teams from ``NAME[=GROUP]`` strings or Team objects; duplicates are an error."""
    teams = tuple(spec if isinstance(spec, Team) else Team.parse(spec) for spec in specs)
    seen: set[str] = set()
    for team in teams:
        if team.name in seen:
            raise KubeLocalError(f"team {team.name!r} given twice")
        seen.add(team.name)
    return teams


def _pairs(text: str, what: str) -> list[tuple[str, str]]:
    pairs = []
    for item in text.split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep:
            raise KubeLocalError(f"{what} {item!r}: expected KEY=VALUE")
        pairs.append((key.strip(), value.strip()))
    return pairs


def _bool(value: str | bool, what: str) -> bool:
    if isinstance(value, bool):
        return value
    lowered = value.lower()
    if lowered not in ("true", "false"):
        raise KubeLocalError(f"{what}: {value!r} is neither true nor false")
    return lowered == "true"


def parse_feature_gates(gates: str | Mapping[str, bool | str] | None) -> dict[str, bool]:
    """``A=true,B=false`` (or a mapping) as a dict of gate name to bool."""
    if gates is None:
        return {}
    items = _pairs(gates, "feature gate") if isinstance(gates, str) else list(gates.items())
    parsed: dict[str, bool] = {}
    for name, value in items:
        if not _GATE.match(name):
            raise KubeLocalError(f"feature gate {name!r}: not a gate name")
        parsed[name] = _bool(value, f"feature gate {name}")
    return parsed


def parse_runtime_config(config: str | Mapping[str, bool | str] | None) -> dict[str, str]:
    """``group/version=true,...`` (or a mapping) as a dict of API to ``true``/``false``."""
    if config is None:
        return {}
    items = _pairs(config, "runtime-config") if isinstance(config, str) else list(config.items())
    parsed: dict[str, str] = {}
    for key, value in items:
        if not _RUNTIME_KEY.match(key):
            raise KubeLocalError(f"runtime-config {key!r}: expected e.g. resource.k8s.io/v1beta2")
        parsed[key] = "true" if _bool(value, f"runtime-config {key}") else "false"
    return parsed


def merge_flag(base: Mapping[str, object], override: Mapping[str, object]) -> str:
    """``k=v,...`` for a flag: ``base`` (what the release needs) updated by ``override``."""
    merged = {**base, **override}
    return ",".join(
        f"{key}={str(value).lower() if isinstance(value, bool) else value}"
        for key, value in merged.items()
    )
