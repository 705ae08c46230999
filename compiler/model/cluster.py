"""Cluster: Kubernetes version, node pools and the kubelet settings gpufleet derives from them."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from compiler.model.base import DnsSubdomainish, Name, PolicyObject, Resources, Strict
from compiler.model.types import Quantity

KUBERNETES_VERSIONS = ("1.32", "1.33", "1.34", "1.35", "1.36")
DEFAULT_DRIVER = "gpu.nvidia.com"


class NodePool(Strict):
    """Identical nodes: how many, which GPU, and the host resources each node has.

    `mig`: `disabled` (whole GPUs only), `allowed` (the solver may give the node's GPUs one MIG
    layout, the same on every GPU of a node), `mixed` (each GPU of a node may differ).
    `nodeNames` formats node names from `{cluster}`, `{pool}` and `{index}` (0-based); node
    names are DRA pool names, so DeviceTaintRules and node-config labels use them.
    """

    name: Name
    nodes: Annotated[int, Field(ge=1, le=100_000)]
    gpu: Annotated[str, Field(min_length=1, max_length=100)]
    gpus_per_node: Annotated[int, Field(ge=1, le=16)]
    host_memory: Quantity
    cpu: Quantity
    mig: Literal["disabled", "allowed", "mixed"] = "disabled"
    node_names: Annotated[str, Field(pattern=r"^[a-z0-9{}.-]+$", max_length=200)] = (
        "{cluster}-{pool}-{index}"
    )


class Kubelet(Strict):
    """Node reservations and memory QoS; the solver subtracts reservations from host capacity."""

    system_reserved: Resources = Resources()
    kube_reserved: Resources = Resources()
    eviction_hard_memory: Quantity | None = None
    """`evictionHard: {memory.available: ...}`; kubelet's default is 100Mi."""
    memory_qos: Annotated[bool, Field(alias="memoryQoS")] = False
    memory_throttling_factor: Annotated[float, Field(gt=0, le=1)] = 0.9
    """memory.high = requests + factor x (limit - requests); the kubelet takes (0, 1]."""


class Kueue(Strict):
    """Whether the cluster runs Kueue, which Kueue minor, and the cohort its queues join."""

    enabled: bool = False
    version: Literal["0.18", "0.19"] = "0.19"
    """The Kueue minor the cluster runs: the Configuration names only what that minor reads."""
    cohort: Name | None = None
    """Default: a cohort named after the cluster."""


FeatureGateName = Annotated[str, Field(pattern=r"^[A-Z][A-Za-z0-9]{1,99}$")]
RuntimeConfigKey = Annotated[
    str, Field(pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/v[0-9]+[a-z0-9]*(/[a-z0-9.-]+)?$")
]


class ApiServer(Strict):
    """What the cluster's control plane turns on beyond its release's defaults.

    `featureGates` as given to `--feature-gates` (kube-apiserver, kube-controller-manager and
    kube-scheduler), `runtimeConfig` as given to kube-apiserver's `--runtime-config`
    (`group/version` or `group/version/resource`). gpufleet emits an object whose API is off by
    default only where the cluster declares what serves it.
    """

    feature_gates: Annotated[dict[FeatureGateName, bool], Field(max_length=64)] = {}
    runtime_config: Annotated[dict[RuntimeConfigKey, bool], Field(max_length=64)] = {}


class ClusterSpec(Strict):
    """A cluster's Kubernetes version and inventory."""

    kubernetes_version: Literal["1.32", "1.33", "1.34", "1.35", "1.36"]
    api_server: ApiServer = ApiServer()
    driver: DnsSubdomainish = DEFAULT_DRIVER
    node_pools: Annotated[list[NodePool], Field(min_length=1, max_length=256)]
    kubelet: Kubelet = Kubelet()
    kueue: Kueue = Kueue()


class Cluster(PolicyObject):
    """One Kubernetes cluster of the fleet."""

    kind: Literal["Cluster"]
    spec: ClusterSpec
