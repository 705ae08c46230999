"""TeamGrant: what the platform grants one team. Only the platform writes these files.

Everything the guardrails exist to restrict lives here, never in the team's own file:
namespaces, clusters, each tier's guarantee and limit, priorities, tolerable device taints,
admin access, the Kueue cohort, the team's group in the clusters and the code owners of its
file, its Pod Security level, and the ways around DRA it may use.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from compiler.model.base import Name, PolicyObject, Strict
from compiler.model.team import DeviceCount, Toleration

GRANTS_DIRECTORY = "grants"
"""Where grants live below the policy directory, one file per team (`grants/<team>.yaml`)."""

GroupName = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9:._@+-]{0,252}$")]
"""A group as the cluster's authenticator names it (client certificate O, OIDC groups claim)."""

CodeOwner = Annotated[
    str,
    Field(pattern=r"^(@[A-Za-z0-9][A-Za-z0-9_.-]*(/[A-Za-z0-9][A-Za-z0-9_.-]*)*|[^@\s]+@[^@\s]+)$"),
]
"""A code owner as CODEOWNERS names it: `@user`, `@org/team` (GitLab: `@group/subgroup`), or
an e-mail address."""

PodSecurityLevel = Literal["baseline", "restricted", "privileged"]


class TierGrant(Strict):
    """The devices of one tier the team is granted: a guarantee and a borrowing limit."""

    tier: Name
    guaranteed: DeviceCount
    limit: DeviceCount | None = None

    @property
    def effective_limit(self) -> int:
        """The limit, defaulting to the guarantee."""
        return self.guaranteed if self.limit is None else self.limit

    @property
    def usable_limit(self) -> int:
        """The limit the team's quotas get: the grant's, never below its guarantee (a grant
        whose limit is below it is GF206 already, and is not reported again)."""
        return max(self.effective_limit, self.guaranteed)


class Allowances(Strict):
    """Ways to GPUs around DRA the team's namespaces may use (all refused by default)."""

    device_plugin_resources: bool = False
    """Device-plugin resources (the fleet's `devicePluginResources`, e.g. `nvidia.com/*`)."""
    gpu_environment: bool = False
    """The NVIDIA container runtime's variables (`NVIDIA_VISIBLE_DEVICES`, ...)."""
    gpu_runtime_classes: bool = False
    """The fleet's GPU runtime classes (`runtimeClassName: nvidia`)."""


class TeamGrantSpec(Strict):
    """What one team may have."""

    group: GroupName | None = None
    """The team's group in the clusters: bound to the fleet's `teamRole` in the team's
    namespaces, and nowhere else (no group: no binding)."""
    owners: Annotated[list[CodeOwner], Field(max_length=32)] = []
    """Who reviews the team's own file (CODEOWNERS)."""
    namespaces: Annotated[list[Name], Field(min_length=1, max_length=64)]
    clusters: Annotated[list[Name], Field(max_length=256)] | None = None
    """The clusters the team is in (default: all)."""
    quotas: Annotated[list[TierGrant], Field(max_length=256)] = []
    priorities: Annotated[list[Name], Field(max_length=64)] = []
    tolerations: Annotated[list[Toleration], Field(max_length=16)] = []
    admin_access: bool = False
    """Whether the team's namespaces may make `adminAccess: true` device requests."""
    cohort: Name | None = None
    """The Kueue cohort of the team's ClusterQueue (default: the cluster's)."""
    pod_security: PodSecurityLevel | None = None
    """The Pod Security Standard enforced in the team's namespaces (default: the fleet's)."""
    allow: Allowances = Allowances()


class TeamGrant(PolicyObject):
    """A team's grant: `metadata.name` is the team's name."""

    kind: Literal["TeamGrant"]
    spec: TeamGrantSpec
