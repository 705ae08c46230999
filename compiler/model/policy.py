"""The policy language: one pydantic model per kind, strict about unknown fields."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator
from pydantic.alias_generators import to_camel

from compiler.load.document import SourceDocument
from compiler.model.types import Name, Quantity

API_VERSION = "gpufleet.dev/v1alpha1"
KUBERNETES_VERSIONS = ("1.32", "1.33", "1.34", "1.35", "1.36")
DEFAULT_DRIVER = "gpu.nvidia.com"
MAX_PRIORITY = 1_000_000_000


class Strict(BaseModel):
    """Base of every policy model: camelCase fields, unknown fields rejected."""

    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        validate_by_alias=True,
        validate_by_name=False,
        frozen=True,
    )


class Metadata(Strict):
    """Name and free-text description of a policy object."""

    name: Name
    description: str = ""


class PolicyObject(Strict):
    """Fields every kind has; `source` remembers the document it was read from."""

    api_version: Literal["gpufleet.dev/v1alpha1"]
    kind: str
    metadata: Metadata
    _source: SourceDocument | None = PrivateAttr(default=None)

    @property
    def name(self) -> str:
        """The object's normalised name."""
        return self.metadata.name

    @property
    def source(self) -> SourceDocument:
        """The document this object was read from."""
        assert self._source is not None, "policy objects are built by model.build"
        return self._source


# ---- Cluster -------------------------------------------------------------------------------


class NodePool(Strict):
    """Identical nodes: how many, which GPU, and the host resources each node has."""

    name: Name
    nodes: Annotated[int, Field(ge=1, le=100_000)]
    gpu: Annotated[str, Field(min_length=1, max_length=100)]
    gpus_per_node: Annotated[int, Field(ge=1, le=16)]
    host_memory: Quantity
    cpu: Quantity
    mig: Literal["disabled", "allowed"] = "disabled"


class ClusterSpec(Strict):
    """A cluster's Kubernetes version and inventory."""

    kubernetes_version: Literal["1.32", "1.33", "1.34", "1.35", "1.36"]
    driver: Annotated[str, Field(min_length=1, max_length=63)] = DEFAULT_DRIVER
    node_pools: Annotated[list[NodePool], Field(min_length=1, max_length=256)]


class Cluster(PolicyObject):
    """One Kubernetes cluster of the fleet."""

    kind: Literal["Cluster"]
    spec: ClusterSpec


# ---- GpuTier -------------------------------------------------------------------------------


class Selector(Strict):
    """Which devices a tier selects: structured fields (all must hold) or a raw CEL expression."""

    models: Annotated[list[Annotated[str, Field(min_length=1)]], Field(max_length=64)] = []
    min_memory: Quantity | None = None
    architectures: Annotated[list[Annotated[str, Field(min_length=1)]], Field(max_length=16)] = []
    cel: Annotated[str, Field(min_length=1, max_length=10 * 1024)] | None = None

    @model_validator(mode="after")
    def _one_style(self) -> Selector:
        structured = bool(self.models or self.architectures or self.min_memory is not None)
        if self.cel is not None and structured:
            raise ValueError("use either `cel` or the structured fields, not both")
        return self


class GpuTierSpec(Strict):
    """A class of devices teams get quotas for; compiles to a DeviceClass."""

    select: Selector = Selector()
    partition: Annotated[str, Field(pattern=r"^[1-7]g\.[0-9]+gb(\+me)?$")] | None = None
    host_memory_per_gpu: Quantity | None = None
    cpu_per_gpu: Quantity | None = None
    gang_match_attribute: (
        Annotated[str, Field(pattern=r"^[a-z0-9.-]+/[A-Za-z][A-Za-z0-9_]*$", max_length=96)] | None
    ) = None


class GpuTier(PolicyObject):
    """A GPU tier (training, inference, ...)."""

    kind: Literal["GpuTier"]
    spec: GpuTierSpec


# ---- Team ----------------------------------------------------------------------------------


class Quota(Strict):
    """A team's share of one tier: guaranteed devices, a borrowing limit, a gang size."""

    tier: Name
    guaranteed: Annotated[int, Field(ge=0, le=10_000_000)]
    limit: Annotated[int, Field(ge=0, le=10_000_000)] | None = None
    gang: Annotated[int, Field(ge=1, le=32)] = 1
    namespace: Name | None = None

    @property
    def effective_limit(self) -> int:
        """The limit, defaulting to the guarantee."""
        return self.guaranteed if self.limit is None else self.limit


class TeamSpec(Strict):
    """A team's namespaces, clusters, quotas and the priorities it may use."""

    namespaces: Annotated[list[Name], Field(min_length=1, max_length=64)]
    clusters: Annotated[list[Name], Field(max_length=256)] | None = None
    quotas: Annotated[list[Quota], Field(max_length=256)] = []
    priorities: Annotated[list[Name], Field(max_length=64)] = []
    memory_qos: Annotated[Literal["guaranteed", "burstable"], Field(alias="memoryQoS")] = (
        "burstable"
    )


class Team(PolicyObject):
    """A team: compiles to namespaces, quotas and claim templates."""

    kind: Literal["Team"]
    spec: TeamSpec


# ---- PriorityLadder ------------------------------------------------------------------------


class PriorityLevel(Strict):
    """One rung of the ladder; compiles to a PriorityClass."""

    name: Name
    value: Annotated[int, Field(ge=-2_147_483_648, le=MAX_PRIORITY)]
    preemption: Literal["PreemptLowerPriority", "Never"] = "PreemptLowerPriority"
    default: bool = False
    description: str = ""


class PriorityLadderSpec(Strict):
    """The fleet's priority levels, highest first."""

    levels: Annotated[list[PriorityLevel], Field(min_length=1, max_length=32)]


class PriorityLadder(PolicyObject):
    """The fleet's one priority ladder."""

    kind: Literal["PriorityLadder"]
    spec: PriorityLadderSpec


# ---- Fleet (GitOps settings) ---------------------------------------------------------------


class GitOps(Strict):
    """Where Argo CD finds the compiled output."""

    repo_url: Annotated[str, Field(min_length=1, max_length=2048, alias="repoURL")]
    revision: Annotated[str, Field(min_length=1, max_length=255)] = "HEAD"
    path: Annotated[str, Field(pattern=r"^[A-Za-z0-9._/-]+$", max_length=255)] = "out"
    argocd_namespace: Name = "argocd"
    project: Name = "gpufleet"


class FleetSpec(Strict):
    """Fleet-wide settings."""

    gitops: GitOps


class Fleet(PolicyObject):
    """Fleet-wide settings (at most one)."""

    kind: Literal["Fleet"]
    spec: FleetSpec


KINDS: dict[str, type[PolicyObject]] = {
    "Cluster": Cluster,
    "GpuTier": GpuTier,
    "Team": Team,
    "PriorityLadder": PriorityLadder,
    "Fleet": Fleet,
}
