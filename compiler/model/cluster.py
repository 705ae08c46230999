"""Cluster: Kubernetes version, node pools and the kubelet settings gpufleet derives from them."""

from __future__ import annotations

import re
from typing import Annotated, Literal, get_args

from pydantic import Field

from compiler.catalog.driver import CURRENT_DRIVER
from compiler.model.base import (
    DnsSubdomainish,
    LabelValue,
    Name,
    PolicyObject,
    QualifiedName,
    Resources,
    Strict,
)
from compiler.model.types import Quantity

KubernetesVersion = Literal["1.32", "1.33", "1.34", "1.35", "1.36", "1.37"]
"""The supported Kubernetes minors, oldest first (compiler.versions has a row for each)."""
KUBERNETES_VERSIONS: tuple[str, ...] = get_args(KubernetesVersion)
DEFAULT_DRIVER = "gpu.nvidia.com"
DriverVersion = Literal["25.3", "25.8", "25.12", "0.4", "0.5"]
"""Releases of the NVIDIA DRA driver (compiler.catalog.driver.DRIVER_VERSIONS)."""


_PLACEHOLDER = re.compile(r"\{([a-z]*)\}")
"""A `nodeNames` placeholder: `{cluster}`, `{pool}` or `{index}`."""


class NodeTaint(Strict):
    """A taint every node of a pool carries (`key=value:effect`), so that only pods that
    tolerate it run there."""

    key: QualifiedName
    value: LabelValue = ""
    effect: Literal["NoSchedule", "NoExecute"] = "NoSchedule"

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}"


GPU_NODE_TAINT = NodeTaint(key="gpufleet.dev/gpu", value="present", effect="NoSchedule")
"""The node taint of a GPU pool unless it declares another (or `nodeTaint: null`): it keeps
pods that claim no GPU off GPU nodes, whose CPU and memory the solver counts for GPU pods."""


GpusPerGroup = Annotated[int, Field(ge=1, le=16)]


class Topology(Strict):
    """GPUs per NUMA node and per PCIe root on a node (groups of consecutive GPU indices): what
    a gang matched on `resource.kubernetes.io/numaNode` or `.../pcieRoot` must fit in."""

    numa_node: GpusPerGroup | None = None
    pcie_root: GpusPerGroup | None = None


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
    node_taint: NodeTaint | None = GPU_NODE_TAINT
    """The taint the pool's nodes register with (`null`: none, and CPU-only pods may use them)."""
    topology: Topology | None = None
    """How the nodes' GPUs group by NUMA node and PCIe root, where the catalog's board for the
    GPU model and gpusPerNode does not say it (or says it wrongly for these nodes)."""

    def node_name(self, cluster: str, index: int) -> str:
        """The name of node `index`: `nodeNames` with its placeholders filled in. Braces that
        are not a placeholder stay as they are (never str.format on user text), so a broken
        format yields an invalid name that resolve reports, not a crash."""
        values = {"cluster": cluster, "pool": self.name, "index": str(index)}
        return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), self.node_names)


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

    kubernetes_version: KubernetesVersion
    api_server: ApiServer = ApiServer()
    driver: DnsSubdomainish = DEFAULT_DRIVER
    driver_feature_gates: Annotated[dict[FeatureGateName, bool], Field(max_length=64)] = {}
    """The feature gates the cluster's DRA driver runs with, as its chart's `featureGates`
    values say (e.g. `{TimeSlicingSettings: true}`): a tier's sharing needs the driver's gate."""
    driver_extended_resources: Annotated[list[QualifiedName], Field(max_length=16)] | None = None
    """The extended resource names the driver's own DeviceClasses map (a tier may not take
    one). Default: what the driver's chart maps (`nvidia.com/gpu` for gpu.nvidia.com, whose
    chart sets it on its `gpu.nvidia.com` class on resource.k8s.io/v1 since v25.12.0);
    `[]` documents an install that maps none."""
    driver_version: DriverVersion = CURRENT_DRIVER
    """The release of the NVIDIA DRA driver the cluster runs (its chart version: `25.8` for
    v25.8.1, `0.4` for v0.4.1, `0.5` for main): it decides which device attributes gangs may
    match on (compiler.catalog.driver)."""
    gang_scheduling: Literal["None", "Workload"] = "None"
    """`Workload`: a scheduling.k8s.io Workload per gang guarantee, whose pod group is
    scheduled all or nothing (Kubernetes 1.35 on, where the cluster serves the API)."""
    node_pools: Annotated[list[NodePool], Field(min_length=1, max_length=256)]
    kubelet: Kubelet = Kubelet()
    kueue: Kueue = Kueue()


class Cluster(PolicyObject):
    """One Kubernetes cluster of the fleet."""

    kind: Literal["Cluster"]
    spec: ClusterSpec
