"""TeamGrant: what the platform grants one team. Only the platform writes these files.

Everything the guardrails exist to restrict lives here, never in the team's own file:
namespaces, clusters, each tier's guarantee and limit, priorities, tolerable device taints,
admin access, the Kueue cohort, the team's group in the clusters and the code owners of its
file, its Pod Security level, and the ways around DRA it may use.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

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

    tier: Annotated[Name, Field(examples=["training"])]
    """The tier granted."""
    guaranteed: Annotated[DeviceCount, Field(examples=[64])]
    """Devices of the tier the team always gets in each of its clusters: the solver proves
    they fit beside every other guarantee; the namespace's ResourceQuota and the Kueue
    ClusterQueue's nominal quota."""
    limit: Annotated[DeviceCount | None, Field(examples=[96])] = None
    """The most devices the team may use, borrowing idle ones beyond its guarantee (the quota
    and Kueue's borrowing limit); not below the guarantee (GF206). Default: the guarantee."""

    @property
    def effective_limit(self) -> int:
        """The limit, defaulting to the guarantee."""
        return self.guaranteed if self.limit is None else self.limit

    @property
    def usable_limit(self) -> int:
        """The limit the team's quotas get: the grant's, never below its guarantee (a grant
        whose limit is below it is GF206 already, and is not reported again)."""
        return max(self.effective_limit, self.guaranteed)


class QuotaOverride(Strict):
    """A tier's guarantee and limit in one cluster, in place of what `quotas` grants there (a
    field left out is the grant's: overriding only `guaranteed` keeps the grant's `limit`,
    which is the guarantee when the grant sets none)."""

    cluster: Annotated[Name, Field(examples=["prod-west"])]
    """The cluster, one the team is granted."""
    tier: Annotated[Name, Field(examples=["training"])]
    """The tier, one `quotas` grants."""
    guaranteed: Annotated[DeviceCount | None, Field(examples=[32])] = None
    """Devices guaranteed in that cluster."""
    limit: Annotated[DeviceCount | None, Field(examples=[48])] = None
    """The borrowing limit in that cluster."""

    @model_validator(mode="after")
    def _overrides_something(self) -> QuotaOverride:
        if self.guaranteed is None and self.limit is None:
            raise ValueError("an override sets `guaranteed`, `limit` or both")
        return self

    def applied(self, granted: TierGrant) -> TierGrant:
        """The tier's grant in the override's cluster."""
        return TierGrant(
            tier=granted.tier,
            guaranteed=granted.guaranteed if self.guaranteed is None else self.guaranteed,
            limit=granted.limit if self.limit is None else self.limit,
        )


class Allowances(Strict):
    """Ways to GPUs around DRA the team's namespaces may use (all refused by default)."""

    device_plugin_resources: Annotated[bool, Field(examples=[True])] = False
    """Device-plugin resources (the fleet's `devicePluginResources`, e.g. `nvidia.com/*`),
    which bypass DRA, its quotas and its taints."""
    gpu_environment: Annotated[bool, Field(examples=[True])] = False
    """The NVIDIA container runtime's variables (`NVIDIA_VISIBLE_DEVICES`, ...), which can
    expose GPUs the pod did not claim."""
    gpu_runtime_classes: Annotated[bool, Field(examples=[True])] = False
    """The fleet's GPU runtime classes (`runtimeClassName: nvidia`), which hand a pod every GPU
    of its node."""

    def granted(self) -> list[str]:
        """The ways around DRA allowed, named as the grant writes them (`gpuEnvironment`),
        sorted."""
        fields = type(self).model_fields
        return sorted(field.alias or name for name, field in fields.items() if getattr(self, name))


class TeamGrantSpec(Strict):
    """What one team may have."""

    group: Annotated[GroupName | None, Field(examples=["ml-research", "oidc:ml-research"])] = None
    """The team's group in the clusters: bound to the fleet's `teamRole` in the team's
    namespaces, and nowhere else (no group: no binding)."""
    owners: Annotated[
        list[CodeOwner], Field(max_length=32, examples=[["@example/ml-research"]])
    ] = []
    """Who reviews the team's own file (CODEOWNERS): `@user`, `@org/team` or an e-mail."""
    namespaces: Annotated[
        list[Name], Field(min_length=1, max_length=64, examples=[["ml-research"]])
    ]
    """The namespaces the team owns in each of its clusters: gpufleet creates them, labelled
    for the admission guardrails, with the team's quotas and RoleBinding."""
    clusters: Annotated[
        Annotated[list[Name], Field(max_length=256)] | None,
        Field(examples=[["prod-east", "prod-west"]]),
    ] = None
    """The clusters the team is in (default: all)."""
    quotas: Annotated[
        list[TierGrant],
        Field(max_length=256, examples=[[{"tier": "training", "guaranteed": 64, "limit": 96}]]),
    ] = []
    """The tiers the team may use, each with a guarantee and a limit; a tier not listed is
    refused by admission (`gpufleet-tier-entitlement`)."""
    quota_overrides: Annotated[
        list[QuotaOverride],
        Field(
            max_length=1024,
            examples=[[{"cluster": "prod-west", "tier": "training", "guaranteed": 32}]],
        ),
    ] = []
    """Per-cluster guarantees and limits in place of `quotas`' (e.g. a smaller guarantee in a
    smaller cluster); the team's own file narrows them as it narrows `quotas`."""
    priorities: Annotated[list[Name], Field(max_length=64, examples=[["training", "batch"]])] = []
    """The priority levels (of the PriorityLadder) the team's pods and Kueue workloads may
    use; others are refused by admission."""
    tolerations: Annotated[
        list[Toleration],
        Field(
            max_length=16,
            examples=[
                [{"key": "gpufleet.dev/burn-in", "operator": "Exists", "effect": "NoSchedule"}]
            ],
        ),
    ] = []
    """The device taints the team's claims may tolerate: the solver counts tainted devices
    for the team, and its claim templates carry the tolerations."""
    admin_access: Annotated[bool, Field(examples=[True])] = False
    """Whether the team's namespaces may make `adminAccess: true` device requests."""
    cohort: Annotated[Name | None, Field(examples=["research"])] = None
    """The Kueue cohort of the team's ClusterQueue (default: the cluster's)."""
    pod_security: Annotated[PodSecurityLevel | None, Field(examples=["privileged"])] = None
    """The Pod Security Standard enforced in the team's namespaces (default: the fleet's)."""
    allow: Annotated[
        Allowances, Field(examples=[{"devicePluginResources": True, "gpuRuntimeClasses": True}])
    ] = Allowances()
    """Ways to GPUs around DRA the team's namespaces may use (all refused by default)."""


class TeamGrant(PolicyObject):
    """A team's grant: `metadata.name` is the team's name."""

    kind: Literal["TeamGrant"]
    spec: Annotated[
        TeamGrantSpec,
        Field(
            examples=[
                {
                    "group": "ml-research",
                    "namespaces": ["ml-research"],
                    "quotas": [{"tier": "training", "guaranteed": 64, "limit": 96}],
                    "priorities": ["training", "batch"],
                }
            ]
        ),
    ]
    """What the platform grants the team."""
