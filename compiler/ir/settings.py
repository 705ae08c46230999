"""The fleet-wide settings emit reads: the Fleet's, or the policy language's defaults.

A policy without a Fleet compiles as if it had one that sets none of these. The defaults are
written once, as the defaults of FleetSpec's fields; this reads them from there, so emit never
restates one (a Fleet cannot be built without its required `gitops`, hence no default Fleet).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from compiler.ir.policy import Fleet, FleetSpec


@dataclass(frozen=True)
class FleetSettings:
    """The settings of the fleet's Fleet object (None: the fleet has none)."""

    fleet: Fleet | None

    def _setting(self, name: str) -> Any:
        """The Fleet's value of FleetSpec field `name`, or the field's default without one."""
        if self.fleet is not None:
            return getattr(self.fleet.spec, name)
        return FleetSpec.model_fields[name].default

    @property
    def team_role(self) -> str:
        """The ClusterRole a team's group is bound to in its namespaces."""
        return cast(str, self._setting("team_role"))

    @property
    def device_plugin_resources(self) -> tuple[str, ...]:
        """Device-plugin resources team namespaces may not request without an allowance."""
        return tuple(self._setting("device_plugin_resources"))

    @property
    def gpu_runtime_classes(self) -> tuple[str, ...]:
        """RuntimeClasses that hand a pod every GPU of its node."""
        return tuple(self._setting("gpu_runtime_classes"))

    @property
    def gpu_environment(self) -> tuple[str, ...]:
        """Environment variables the NVIDIA container runtime reads to expose GPUs."""
        return tuple(self._setting("gpu_environment"))

    @property
    def system_namespaces(self) -> tuple[str, ...]:
        """The namespaces where the platform's own GPU components run."""
        return tuple(self._setting("system_namespaces").model_dump().values())

    @property
    def deny_unowned_claims(self) -> bool:
        """Whether GPU claims in namespaces no team owns are refused."""
        return bool(self._setting("deny_unowned_claims"))
