"""Fleet: settings that hold for the whole fleet (GitOps wiring, legacy resources)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from compiler.model.base import Name, PolicyObject, QualifiedName, Strict


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
    device_plugin_resources: Annotated[list[QualifiedName], Field(max_length=16)] = [
        "nvidia.com/gpu"
    ]
    """Extended resources of device plugins that DRA-managed namespaces may not request."""


class Fleet(PolicyObject):
    """Fleet-wide settings (at most one)."""

    kind: Literal["Fleet"]
    spec: FleetSpec
