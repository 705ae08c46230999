"""Cluster: Kubernetes version, node pools and the kubelet settings gpufleet derives from them."""

from __future__ import annotations

import functools
import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Discriminator, Field, Tag, model_validator

from compiler.catalog.driver import CURRENT_DRIVER, NVIDIA_DRIVER, DriverVersion
from compiler.model.base import (
    DnsSubdomainish,
    LabelValue,
    Name,
    PolicyObject,
    QualifiedName,
    Resources,
    Strict,
)
from compiler.model.types import NodeName, Quantity
from compiler.versions import KubernetesVersion

DEFAULT_DRIVER = NVIDIA_DRIVER


_PLACEHOLDER = re.compile(r"\{([a-z]*)\}")
"""A `nodeNames` placeholder: `{cluster}`, `{pool}` or `{index}`."""


class NodeTaint(Strict):
    """A taint every node of a pool carries (`key=value:effect`), so that only pods that
    tolerate it run there."""

    key: Annotated[QualifiedName, Field(examples=["gpufleet.dev/gpu", "nvidia.com/gpu"])]
    """The taint's key (a qualified name: an optional DNS-subdomain prefix and `/`)."""
    value: Annotated[LabelValue, Field(examples=["present"])] = ""
    """The taint's value: empty, or a label value (at most 63 characters)."""
    effect: Annotated[Literal["NoSchedule", "NoExecute"], Field(examples=["NoExecute"])] = (
        "NoSchedule"
    )
    """`NoSchedule`: pods that do not tolerate it are not scheduled there; `NoExecute`: they
    are also evicted when the taint is added."""

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}"

    def fields(self) -> dict[str, str]:
        """The taint as a Kubernetes object writes it: key, value, effect (a node's taints, a
        ResourceFlavor's nodeTaints, a kubelet's registerWithTaints)."""
        return {"key": self.key, "value": self.value, "effect": self.effect}


GPU_NODE_TAINT = NodeTaint(key="gpufleet.dev/gpu", value="present", effect="NoSchedule")
"""The node taint of a GPU pool unless it declares another (or `nodeTaint: null`): it keeps
pods that claim no GPU off GPU nodes, whose CPU and memory the solver counts for GPU pods."""


_EXAMPLE_POOL = {
    "name": "h100",
    "nodes": 16,
    "gpu": "H100-80GB",
    "gpusPerNode": 8,
    "hostMemory": "2Ti",
    "cpu": 224,
    "mig": "allowed",
}
"""A node pool as the schema's examples show one."""

GpusPerGroup = Annotated[int, Field(ge=1, le=16)]

MAX_POOL_NODES = 100_000

NodeNamePattern = Annotated[
    str,
    Field(
        pattern=r"^[a-z0-9{}.-]+$",
        max_length=1024,
        examples=["{cluster}-{pool}-{index}"],
    ),
]
"""A node name with placeholders: `{cluster}`, `{pool}` and `{index}` (0-based)."""


def _some_names(names: tuple[str, ...]) -> tuple[str, ...]:
    if not names:
        raise ValueError("list at least one node name, or give a pattern and `nodes`")
    return names


NodeNameList = Annotated[
    tuple[NodeName, ...],
    Field(
        max_length=MAX_POOL_NODES,
        json_schema_extra={"minItems": 1},
        examples=[["gke-prod-a100-pool-1-abcd", "gke-prod-a100-pool-1-x7kq"]],
    ),
    AfterValidator(_some_names),
]
"""The pool's nodes by name, as the cluster reports them; node `i` is the i-th name."""


def _pattern_or_list(value: Any) -> str:
    return "list" if isinstance(value, list | tuple) else "pattern"


def _nodes_unless_listed(schema: dict[str, Any]) -> None:
    """In the JSON schema, `nodes` is required only where `nodeNames` is not a list."""
    schema["required"] = [field for field in schema.get("required", []) if field != "nodes"]
    schema["if"] = {"required": ["nodeNames"], "properties": {"nodeNames": {"type": "array"}}}
    schema["else"] = {"required": ["nodes"]}


NodeNames = Annotated[
    Annotated[NodeNamePattern, Tag("pattern")] | Annotated[NodeNameList, Tag("list")],
    Discriminator(_pattern_or_list),
]
"""`nodeNames`: a pattern, or the list of the pool's node names (its nodes are those)."""


class Topology(Strict):
    """GPUs per NUMA node and per PCIe root on a node (groups of consecutive GPU indices): what
    a gang matched on `resource.kubernetes.io/numaNode` or `.../pcieRoot` must fit in."""

    numa_node: Annotated[GpusPerGroup | None, Field(examples=[4, 2])] = None
    """GPUs per NUMA node (consecutive GPU indices), 1 to 16; must divide `gpusPerNode`.
    Default: what the catalog's board says for the GPU model and `gpusPerNode`."""
    pcie_root: Annotated[GpusPerGroup | None, Field(examples=[2])] = None
    """GPUs per PCIe root (consecutive GPU indices), 1 to 16; must divide the NUMA group.
    Default: what the catalog's board says for the GPU model and `gpusPerNode`."""


class NodePool(Strict):
    """Identical nodes: how many, which GPU, and the host resources each node has.

    Compiles to the kubelet drop-in and MIG configuration of its nodes (`node-config/`).
    """

    model_config = ConfigDict(json_schema_extra=_nodes_unless_listed)

    name: Annotated[Name, Field(examples=["h100", "l40s"])]
    """The pool's name, unique in the cluster; DeviceTaints and node-config files name it."""
    nodes: Annotated[int, Field(ge=1, le=MAX_POOL_NODES, examples=[16])]
    """How many identical nodes the pool has (1 to 100,000): the capacity the solver counts.
    With a list of `nodeNames` it is their number, and may be left out."""
    gpu: Annotated[str, Field(min_length=1, max_length=100, examples=["H100-80GB", "L40S"])]
    """The GPU model of every node: a catalog id (`H100-80GB`, `H100-NVL`, `A100-40GB`,
    `A100-80GB`, `H200`, `B200`, `A30`, `L4`, `L40S`); it decides the device attributes tiers
    select on and the MIG profiles the pool offers."""
    gpus_per_node: Annotated[int, Field(ge=1, le=16, examples=[8])]
    """GPUs per node, 1 to 16."""
    host_memory: Annotated[Quantity, Field(examples=["2Ti", "512Gi"])]
    """Each node's memory in bytes (`2Ti`); the solver subtracts the kubelet's reservations
    and eviction threshold, and tiers' `hostMemoryPerGpu` must fit in the rest."""
    cpu: Annotated[Quantity, Field(examples=[224, "64"])]
    """Each node's CPU cores (`224`); the solver subtracts the kubelet's reservations, and
    tiers' `cpuPerGpu` must fit in the rest."""
    mig: Annotated[Literal["disabled", "allowed", "mixed"], Field(examples=["allowed"])] = (
        "disabled"
    )
    """`disabled`: whole GPUs only; `allowed`: the solver may give a node's GPUs one MIG
    layout, the same on every GPU of the node; `mixed`: each GPU of a node may have its own.
    The layouts go to the pool's mig-parted config in `node-config/`."""
    node_names: Annotated[
        NodeNames,
        Field(
            examples=[
                "{cluster}-{pool}-{index}",
                ["gke-prod-a100-pool-1-abcd", "gke-prod-a100-pool-1-x7kq"],
            ]
        ),
    ] = "{cluster}-{pool}-{index}"
    """How the pool's nodes are named: a pattern of `{cluster}`, `{pool}` and `{index}`
    (0-based), or the list of their names as the cluster reports them (e.g. a GKE node pool's
    `gke-prod-a100-pool-1-x7kq`; node `i` is the i-th). Node names are DRA pool names, so
    DeviceTaintRules and node-config labels use them: DNS-1123 subdomains of up to 253
    characters, each used once in the cluster."""
    node_taint: Annotated[
        NodeTaint | None,
        Field(examples=[{"key": "gpufleet.dev/gpu", "value": "present", "effect": "NoSchedule"}]),
    ] = GPU_NODE_TAINT
    """The taint the pool's nodes register with (the kubelet drop-in's `registerWithTaints`),
    which keeps pods that claim no GPU off the nodes; `null`: none, and CPU-only pods may use
    them, taking the CPU and memory the solver counted for GPU pods."""
    topology: Annotated[Topology | None, Field(examples=[{"numaNode": 2, "pcieRoot": 2}])] = None
    """How the nodes' GPUs group by NUMA node and PCIe root, where the catalog's board for the
    GPU model and gpusPerNode does not say it (or says it wrongly for these nodes)."""

    @model_validator(mode="before")
    @classmethod
    def _count_listed_nodes(cls, data: Any) -> Any:
        """`nodes` defaults to the number of listed `nodeNames` (resolve reports a count
        that disagrees with the list, where `nodes` is written)."""
        if isinstance(data, dict) and "nodes" not in data:
            listed = data.get("nodeNames")
            if isinstance(listed, list | tuple) and listed:
                return {**data, "nodes": len(listed)}
        return data

    @property
    def listed_names(self) -> tuple[str, ...] | None:
        """The node names the pool lists, or None when a pattern names its nodes."""
        return self.node_names if isinstance(self.node_names, tuple) else None

    def node_name(self, cluster: str, index: int) -> str:
        """The name of node `index`: the listed name, or `nodeNames` with its placeholders
        filled in."""
        if isinstance(self.node_names, tuple):
            return self.node_names[index]
        return self._filled(self.node_names, cluster=cluster, pool=self.name, index=str(index))

    def name_pattern(self, cluster: str) -> str | None:
        """The `nodeNames` pattern with `{cluster}` and `{pool}` filled in and `{index}` kept
        (None where the pool lists its names): what every node name of the pool matches."""
        if isinstance(self.node_names, tuple):
            return None
        return self._filled(self.node_names, cluster=cluster, pool=self.name)

    @staticmethod
    def _filled(pattern: str, **values: str) -> str:
        """`pattern` with the placeholders named in `values` filled in. Braces that are not
        one stay as they are (never str.format on user text), so a broken format yields an
        invalid name that resolve reports."""
        return "".join(
            values.get(piece, f"{{{piece}}}") if i % 2 else piece
            for i, piece in enumerate(_pieces(pattern))
        )


@functools.lru_cache(maxsize=256)
def _pieces(pattern: str) -> tuple[str, ...]:
    """`pattern` split at its placeholders: text, placeholder name, text, ... (a node name is
    filled in for every node of the fleet: the pattern is split once)."""
    return tuple(_PLACEHOLDER.split(pattern))


class Kubelet(Strict):
    """Node reservations and memory QoS; the solver subtracts reservations from host capacity."""

    system_reserved: Annotated[Resources, Field(examples=[{"cpu": 4, "memory": "16Gi"}])] = (
        Resources()
    )
    """CPU and memory the kubelet reserves for the operating system (`systemReserved`); the
    solver subtracts them from every node's `cpu` and `hostMemory`."""
    kube_reserved: Annotated[Resources, Field(examples=[{"cpu": 2, "memory": "8Gi"}])] = Resources()
    """CPU and memory the kubelet reserves for Kubernetes daemons (`kubeReserved`); the solver
    subtracts them from every node's `cpu` and `hostMemory`."""
    eviction_hard_memory: Annotated[Quantity | None, Field(examples=["1Gi"])] = None
    """The kubelet's hard eviction threshold for memory (`evictionHard: {memory.available:
    ...}`), subtracted from host memory like a reservation. Default: the kubelet's, 100Mi."""
    memory_qos: Annotated[bool, Field(alias="memoryQoS", examples=[True])] = False
    """Turn on the kubelet's memory QoS (cgroup v2 `memory.high` throttling; the `MemoryQoS`
    gate, alpha up to 1.36, on by default from 1.37) in the kubelet drop-ins."""
    memory_throttling_factor: Annotated[float, Field(gt=0, le=1, examples=[0.8])] = 0.9
    """With memory QoS: memory.high = requests + factor x (limit - requests); the kubelet
    takes (0, 1]."""


class Kueue(Strict):
    """Whether the cluster runs Kueue, which Kueue minor, and the cohort its queues join."""

    enabled: Annotated[bool, Field(examples=[True])] = False
    """Emit Kueue's objects for the cluster: ResourceFlavors per tier, a ClusterQueue per team
    with its guarantee as nominal quota and its limit as borrowing limit, a LocalQueue per team
    namespace, WorkloadPriorityClasses from the ladder."""
    version: Annotated[Literal["0.18", "0.19"], Field(examples=["0.18"])] = "0.19"
    """The Kueue minor the cluster runs: the Configuration names only what that minor reads."""
    cohort: Annotated[Name | None, Field(examples=["prod"])] = None
    """The root cohort the teams' ClusterQueues (and their own cohorts) borrow within.
    Default: a cohort named after the cluster."""


FeatureGateName = Annotated[str, Field(pattern=r"^[A-Z][A-Za-z0-9]{1,99}$")]
RuntimeConfigKey = Annotated[
    str, Field(pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/v[0-9]+[a-z0-9]*(/[a-z0-9.-]+)?$")
]


class ApiServer(Strict):
    """What the cluster's control plane turns on beyond its release's defaults: gpufleet emits
    an object whose API is off by default only where the cluster declares what serves it."""

    feature_gates: Annotated[
        dict[FeatureGateName, bool],
        Field(max_length=64, examples=[{"DRADeviceTaintRules": True}]),
    ] = {}
    """Feature gates as given to `--feature-gates` (kube-apiserver, kube-controller-manager and
    kube-scheduler), gate name to on or off: a gated feature declared on is not warned about
    (GF600)."""
    runtime_config: Annotated[
        dict[RuntimeConfigKey, bool],
        Field(max_length=64, examples=[{"resource.k8s.io/v1beta2/devicetaintrules": True}]),
    ] = {}
    """API versions as given to kube-apiserver's `--runtime-config` (`group/version` or
    `group/version/resource`): an object whose API is off by default is emitted only where it
    is declared on here (else warning GF603 leaves it out)."""


class ClusterSpec(Strict):
    """A cluster's Kubernetes version and inventory."""

    kubernetes_version: Annotated[KubernetesVersion, Field(examples=["1.36"])]
    """The cluster's Kubernetes minor, quoted (`"1.30"` unquoted is the number 1.3): it decides
    every emitted apiVersion (resource.k8s.io v1beta1 to v1, DeviceTaintRule, Workload) and
    what is off by default there."""
    api_server: Annotated[
        ApiServer, Field(examples=[{"featureGates": {"DRADeviceTaintRules": True}}])
    ] = ApiServer()
    """What the control plane enables beyond the release's defaults."""
    driver: Annotated[DnsSubdomainish, Field(examples=["gpu.nvidia.com"])] = DEFAULT_DRIVER
    """The DRA driver that publishes the GPUs (the DeviceClasses' `device.driver`)."""
    driver_feature_gates: Annotated[
        dict[FeatureGateName, bool],
        Field(max_length=64, examples=[{"TimeSlicingSettings": True, "MPSSupport": True}]),
    ] = {}
    """The feature gates the cluster's DRA driver runs with, as its chart's `featureGates`
    values say (e.g. `{TimeSlicingSettings: true}`): a tier's sharing needs the driver's gate."""
    driver_extended_resources: Annotated[
        Annotated[list[QualifiedName], Field(max_length=16)] | None,
        Field(examples=[[], ["nvidia.com/gpu"]]),
    ] = None
    """The extended resource names the driver's own DeviceClasses map (a tier may not take
    one). Default: what the driver's chart maps (`nvidia.com/gpu` for gpu.nvidia.com, whose
    chart sets it on its `gpu.nvidia.com` class on resource.k8s.io/v1 since v25.12.0);
    `[]` documents an install that maps none."""
    driver_version: Annotated[DriverVersion, Field(examples=["25.12"])] = CURRENT_DRIVER
    """The release of the NVIDIA DRA driver the cluster runs (its chart version: `25.8` for
    v25.8.1, `0.4` for v0.4.1, `0.5` for main): it decides which device attributes gangs may
    match on (compiler.catalog.driver)."""
    gang_scheduling: Annotated[Literal["None", "Workload"], Field(examples=["Workload"])] = "None"
    """`Workload`: a scheduling.k8s.io Workload per gang guarantee, whose pod group is
    scheduled all or nothing (Kubernetes 1.35 on, where the cluster serves the API); `None`:
    gangs are kept together by their claim templates only."""
    node_pools: Annotated[
        list[NodePool],
        Field(
            min_length=1,
            max_length=256,
            examples=[[_EXAMPLE_POOL]],
        ),
    ]
    """The cluster's GPU nodes, as pools of identical nodes (1 to 256 pools)."""
    kubelet: Annotated[
        Kubelet, Field(examples=[{"systemReserved": {"cpu": 4, "memory": "16Gi"}}])
    ] = Kubelet()
    """Reservations and memory QoS of the GPU nodes' kubelets; compiles to a kubelet drop-in
    per pool (`node-config/kubelet/<pool>/50-gpufleet.conf`)."""
    kueue: Annotated[Kueue, Field(examples=[{"enabled": True}])] = Kueue()
    """Whether and how the cluster's quotas are also Kueue queues."""


class Cluster(PolicyObject):
    """One Kubernetes cluster of the fleet."""

    kind: Literal["Cluster"]
    spec: Annotated[
        ClusterSpec,
        Field(examples=[{"kubernetesVersion": "1.36", "nodePools": [_EXAMPLE_POOL]}]),
    ]
    """The cluster's Kubernetes version and inventory."""
