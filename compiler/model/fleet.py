"""Fleet: settings that hold for the whole fleet (GitOps wiring, legacy resources)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from compiler.model.base import Name, PolicyObject, QualifiedName, Strict


def _inside_repository(path: str) -> str:
    if path.startswith("/") or ".." in path.split("/"):
        raise ValueError("path is relative to the repository root and may not contain `..`")
    return path


class GitOps(Strict):
    """Where Argo CD finds the compiled output.

    repoURL and revision land in the ApplicationSet's template, which Argo CD renders as a Go
    template: braces there would be template code, so they (and whitespace) are refused.
    """

    repo_url: Annotated[
        str, Field(min_length=1, max_length=2048, pattern=r"^[^\s{}]+$", alias="repoURL")
    ]
    revision: Annotated[str, Field(pattern=r"^[A-Za-z0-9._/@+-]+$", max_length=255)] = "HEAD"
    path: Annotated[
        str,
        Field(pattern=r"^[A-Za-z0-9._/-]+$", max_length=255),
        AfterValidator(_inside_repository),
    ] = "out"
    argocd_namespace: Name = "argocd"
    project: Name = "gpufleet"


class SystemNamespaces(Strict):
    """Where the platform's own GPU components run: no team may own these namespaces."""

    gpu_operator: Name = "gpu-operator"
    dra_driver: Name = "nvidia-dra-driver-gpu"
    kueue: Name = "kueue-system"


GroupName = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9:._@+-]{0,252}$")]
"""A group as the cluster's authenticator names it (client certificate O, OIDC groups claim)."""


class TeamIdentity(Strict):
    """Who a team is in its clusters."""

    group: GroupName


class FleetSpec(Strict):
    """Fleet-wide settings."""

    gitops: GitOps
    system_namespaces: SystemNamespaces = SystemNamespaces()
    reserved_namespaces: Annotated[list[Name], Field(max_length=256)] = []
    """Further namespaces no team may own (monitoring, ingress, ...)."""
    teams: Annotated[dict[Name, TeamIdentity], Field(max_length=4096)] = {}
    """Each team's group in the clusters, declared by the platform (never by the team): it gets
    `teamRole` in the team's namespaces and nothing elsewhere."""
    team_role: Name = "edit"
    """The ClusterRole a team's group is bound to in each of its namespaces."""
    pod_security: Literal["baseline", "restricted"] = "baseline"
    """The Pod Security Standard enforced in team namespaces: `baseline` refuses privileged
    pods and host paths such as /dev, which would reach GPUs around DRA."""
    device_plugin_resources: Annotated[list[QualifiedName], Field(max_length=16)] = [
        "nvidia.com/gpu"
    ]
    """Extended resources of device plugins that DRA-managed namespaces may not request (the
    NVIDIA device plugin's MIG resources of GPUs MIG may partition, `nvidia.com/mig-<profile>`,
    are always refused too)."""
    gpu_runtime_classes: Annotated[list[Name], Field(max_length=16)] = ["nvidia"]
    """RuntimeClasses that hand every GPU of a node to a pod; refused in team namespaces."""


class Fleet(PolicyObject):
    """Fleet-wide settings (at most one)."""

    kind: Literal["Fleet"]
    spec: FleetSpec
