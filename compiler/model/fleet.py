"""Fleet: settings that hold for the whole fleet (GitOps wiring, legacy resources)."""

from __future__ import annotations

import posixpath
from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from compiler.model.base import Name, PolicyObject, Strict
from compiler.model.grant import CodeOwner
from compiler.model.suppression import Suppression


def _inside_repository(path: str) -> str:
    if path.startswith("/") or ".." in path.split("/"):
        raise ValueError("path is relative to the repository root and may not contain `..`")
    return posixpath.normpath(path)


RepositoryPath = Annotated[
    str,
    Field(pattern=r"^[A-Za-z0-9._/-]+$", max_length=255),
    AfterValidator(_inside_repository),
]
"""A path relative to the repository root, normalised, never leaving it."""


class GitOps(Strict):
    """Where Argo CD finds the compiled output: the AppProject and ApplicationSet in
    `out/argocd/` point at it."""

    repo_url: Annotated[
        str,
        Field(
            min_length=1,
            max_length=2048,
            pattern=r"^[^\s{}]+$",
            alias="repoURL",
            examples=["https://git.example.com/platform/gpu-fleet.git"],
        ),
    ]
    """The Git repository Argo CD clones (the ApplicationSet's `repoURL`). It lands in a Go
    template, so braces and whitespace are refused."""
    revision: Annotated[
        str, Field(pattern=r"^[A-Za-z0-9._/@+-]+$", max_length=255, examples=["main"])
    ] = "HEAD"
    """The branch, tag or commit Argo CD syncs (`targetRevision`)."""
    path: Annotated[RepositoryPath, Field(examples=["out", "deploy/gpufleet"])] = "out"
    """Where `gpufleet compile` writes in the repository, relative to its root: Argo CD syncs
    `<path>/clusters/<cluster>`."""
    argocd_namespace: Annotated[Name, Field(examples=["argocd"])] = "argocd"
    """The namespace Argo CD runs in, where the AppProject and ApplicationSet go."""
    project: Annotated[Name, Field(examples=["gpu-platform"])] = "gpufleet"
    """The name of the Argo CD AppProject that limits the Applications to the fleet's
    clusters, namespaces and emitted kinds."""


ResourcePattern = Annotated[
    str,
    Field(
        pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/(\*|[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$",
        max_length=316,
    ),
]
"""An extended resource name (`nvidia.com/gpu`) or a whole domain of them (`nvidia.com/*`)."""

EnvironmentName = Annotated[str, Field(pattern=r"^[-._a-zA-Z][-._a-zA-Z0-9]*$", max_length=256)]


class SystemNamespaces(Strict):
    """Where the platform's own GPU components run: no team may own these namespaces."""

    gpu_operator: Annotated[Name, Field(examples=["gpu-operator"])] = "gpu-operator"
    """The NVIDIA GPU Operator's namespace."""
    dra_driver: Annotated[Name, Field(examples=["nvidia-dra-driver-gpu"])] = "nvidia-dra-driver-gpu"
    """The NVIDIA DRA driver's namespace."""
    kueue: Annotated[Name, Field(examples=["kueue-system"])] = "kueue-system"
    """Kueue's namespace."""


class FleetSpec(Strict):
    """Fleet-wide settings."""

    gitops: Annotated[
        GitOps,
        Field(
            examples=[
                {
                    "repoURL": "https://git.example.com/platform/gpu-fleet.git",
                    "revision": "main",
                    "path": "out",
                }
            ]
        ),
    ]
    """Where Argo CD finds the compiled output."""
    system_namespaces: Annotated[
        SystemNamespaces, Field(examples=[{"gpuOperator": "nvidia-gpu-operator"}])
    ] = SystemNamespaces()
    """Where the platform's own GPU components run: no team may own these namespaces, and
    claims there are not refused by `denyUnownedClaims`."""
    reserved_namespaces: Annotated[
        list[Name], Field(max_length=256, examples=[["monitoring", "ingress-nginx"]])
    ] = []
    """Further namespaces no team may own (monitoring, ingress, ...)."""
    owners: Annotated[
        list[CodeOwner], Field(max_length=32, examples=[["@example/gpu-platform"]])
    ] = []
    """The platform's code owners: they review the fleet, clusters, tiers, taints and every
    grant. With owners declared, `gpufleet check` fails when CODEOWNERS routes a policy file
    elsewhere (`gpufleet codeowners` writes its block)."""
    codeowners: Annotated[RepositoryPath, Field(examples=["CODEOWNERS"])] = ".github/CODEOWNERS"
    """The CODEOWNERS file, relative to the repository root."""
    team_role: Annotated[Name, Field(examples=["gpu-team"])] = "edit"
    """The ClusterRole a team's group (declared in its grant) is bound to in each of its
    namespaces."""
    pod_security: Annotated[Literal["baseline", "restricted"], Field(examples=["restricted"])] = (
        "baseline"
    )
    """The Pod Security Standard enforced in team namespaces: `baseline` refuses privileged
    pods and host paths such as /dev, which would reach GPUs around DRA."""
    device_plugin_resources: Annotated[
        list[ResourcePattern],
        Field(max_length=16, examples=[["nvidia.com/*", "amd.com/gpu"]]),
    ] = ["nvidia.com/*"]
    """Device-plugin resources team namespaces may not request unless their grant allows it:
    exact names or a whole domain (`nvidia.com/*`: `nvidia.com/gpu`, the MIG resources
    `nvidia.com/mig-<profile>`, ...). A name a tier serves through DRA (its
    `extendedResourceName`) stays allowed."""
    gpu_runtime_classes: Annotated[
        list[Name], Field(max_length=16, examples=[["nvidia", "nvidia-cdi"]])
    ] = ["nvidia"]
    """RuntimeClasses that hand every GPU of a node to a pod; refused in team namespaces
    unless their grant allows them."""
    gpu_environment: Annotated[
        list[EnvironmentName],
        Field(max_length=16, examples=[["NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"]]),
    ] = ["NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES"]
    """Container environment variables the NVIDIA container runtime reads to expose GPUs;
    refused in team namespaces unless their grant allows them."""
    deny_unowned_claims: Annotated[bool, Field(examples=[True])] = False
    """Refuse GPU claims (of a tier's or the driver's DeviceClasses) in namespaces no team
    owns, other than the system namespaces and `kube-system` (the admission policy
    `gpufleet-unowned-claims`)."""
    suppressions: Annotated[
        list[Suppression],
        Field(
            max_length=256,
            examples=[[{"code": "GF602", "cluster": "prod-east", "reason": "no fallbacks used"}]],
        ),
    ] = []
    """Warning codes the platform silences, each in a scope and with a required reason;
    errors cannot be silenced (GF260), one that silences nothing is a warning (GF261), and
    every one is listed in the report with what it silenced."""


class Fleet(PolicyObject):
    """Fleet-wide settings (at most one)."""

    kind: Literal["Fleet"]
    spec: Annotated[
        FleetSpec,
        Field(
            examples=[
                {
                    "gitops": {"repoURL": "https://git.example.com/platform/gpu-fleet.git"},
                    "owners": ["@example/gpu-platform"],
                }
            ]
        ),
    ]
    """Fleet-wide settings: GitOps wiring, ownership and the guardrails around DRA."""
