"""What every policy model shares: strictness, camelCase fields, metadata and provenance."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr
from pydantic.alias_generators import to_camel

from compiler.load.document import SourceDocument
from compiler.model.types import Name, Quantity

__all__ = [
    "API_VERSION",
    "LabelValue",
    "Metadata",
    "Name",
    "PolicyObject",
    "Quantity",
    "Strict",
]

API_VERSION = "gpufleet.dev/v1alpha1"


class Strict(BaseModel):
    """Base of every policy model: camelCase fields, unknown fields rejected, immutable."""

    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        validate_by_alias=True,
        validate_by_name=False,
        frozen=True,
    )


class Metadata(Strict):
    """Name and free-text description of a policy object."""

    name: Annotated[Name, Field(examples=["prod-east", "ml-research", "training"])]
    """The object's name, unique per kind: a DNS-1123 label (lower-case letters, digits and
    `-`, at most 63 characters) after normalising (`ML_Research` becomes `ml-research`).
    Other objects refer to it by this name, and the objects it compiles to carry it."""
    description: Annotated[
        str, Field(max_length=1024, examples=["H100 and H200 nodes for multi-node training"])
    ] = ""
    """Free text for the people who read the policy; compiles to nothing."""


class PolicyObject(Strict):
    """Fields every kind has; `source` remembers the document it was read from."""

    api_version: Literal["gpufleet.dev/v1alpha1"]
    """The version of the policy language this document is written in."""
    kind: str
    """What the document declares: Fleet, Cluster, GpuModel, GpuTier, TeamGrant, Team,
    PriorityLadder or DeviceTaint. It decides what `spec` holds."""
    metadata: Annotated[Metadata, Field(examples=[{"name": "training"}])]
    """The object's name (and a description for people)."""
    _source: SourceDocument | None = PrivateAttr(default=None)

    @property
    def name(self) -> str:
        """The object's normalised name."""
        return self.metadata.name

    @property
    def source(self) -> SourceDocument:
        """The document this object was read from."""
        # read from pydantic's private storage directly: `self._source` takes its slow path
        document: SourceDocument | None = (self.__pydantic_private__ or {}).get("_source")
        assert document is not None, "policy objects are built by model.build"
        return document


class Resources(Strict):
    """CPU and memory amounts, e.g. a kubelet reservation."""

    cpu: Annotated[Quantity | None, Field(examples=[4, "500m"])] = None
    """CPU cores (`4`, or millicores: `500m`). Default: none reserved."""
    memory: Annotated[Quantity | None, Field(examples=["16Gi"])] = None
    """Memory in bytes, with a binary suffix (`16Gi`). Default: none reserved."""


DnsSubdomainish = Annotated[str, Field(pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$", max_length=253)]
"""A lower-case DNS subdomain (driver names, label domains)."""

QualifiedName = Annotated[
    str,
    Field(
        pattern=r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$",
        max_length=316,
    ),
]
"""A Kubernetes qualified name: an optional DNS-subdomain prefix, `/`, and a name."""

LabelValue = Annotated[
    str, Field(max_length=63, pattern=r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$")
]
"""A Kubernetes label (and taint) value: empty, or ASCII letters, digits, `-_.` inside."""
