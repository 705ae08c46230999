"""DeviceTaint: mark devices (a broken GPU, a pool in maintenance) for tolerant teams only."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag, model_validator

from compiler.model.base import LabelValue, Name, PolicyObject, QualifiedName, Strict
from compiler.model.tier import Selector
from compiler.model.types import NodeName


def _index_or_name(value: Any) -> str:
    return "name" if isinstance(value, str) else "index"


NodeIndex = Annotated[int, Field(ge=0, le=100_000, examples=[3])]
"""A node by its index within its pool (0-based, in `nodeNames` order)."""

TaintedNode = Annotated[
    Annotated[NodeIndex, Tag("index")] | Annotated[NodeName, Tag("name")],
    Discriminator(_index_or_name),
]
"""`node`: an index within `pool`, or a node's name (its pool is then found by the name)."""


class DeviceTaintSpec(Strict):
    """Which devices (cluster, optionally pool, node by index or name, device index or a
    selector) and the taint to put on them."""

    cluster: Annotated[Name, Field(examples=["prod-east"])]
    """The cluster whose devices are tainted."""
    pool: Annotated[Name | None, Field(examples=["h100"])] = None
    """Only the devices of this node pool. Default: every pool of the cluster."""
    node: Annotated[TaintedNode | None, Field(examples=[15, "gke-prod-a100-pool-1-x7kq"])] = None
    """Only the devices of this node: its 0-based index in `pool` (the `{index}` of the pool's
    `nodeNames`, or its place in their list), or its name (its pool is then found by the name
    and `pool` may be left out). Default: every node of the pool."""
    device: Annotated[Annotated[int, Field(ge=0, le=63)] | None, Field(examples=[5])] = None
    """Only this GPU of each node, by its 0-based index on the node. Default: every GPU."""
    select: Annotated[Selector | None, Field(examples=[{"models": ["A100-40GB"]}])] = None
    """Only the devices this selector matches (like a tier's `select`). Default: all."""
    key: Annotated[QualifiedName, Field(examples=["gpu.nvidia.com/ecc-errors"])]
    """The taint's key; teams tolerate it by this key (their grant's `tolerations`)."""
    value: Annotated[LabelValue, Field(examples=["uncorrectable", "true"])] = ""
    """The taint's value: empty, or a label value (at most 63 characters)."""
    effect: Annotated[Literal["NoSchedule", "NoExecute", "None"], Field(examples=["NoExecute"])] = (
        "NoSchedule"
    )
    """`NoSchedule`: claims that do not tolerate it get none of the devices, and the solver
    takes them from every intolerant team's capacity; `NoExecute`: pods using them are also
    evicted; `None`: only marks the devices (Kubernetes 1.35 on), capacity unchanged."""

    @model_validator(mode="after")
    def _node_needs_pool(self) -> DeviceTaintSpec:
        if isinstance(self.node, int) and self.pool is None:
            raise ValueError("`node` is an index within a pool: give `pool` too, or the name")
        return self


class DeviceTaint(PolicyObject):
    """A device taint; compiles to a DeviceTaintRule and removes capacity from intolerant teams."""

    kind: Literal["DeviceTaint"]
    spec: Annotated[
        DeviceTaintSpec,
        Field(
            examples=[
                {
                    "cluster": "prod-east",
                    "pool": "h100",
                    "node": 3,
                    "device": 5,
                    "key": "gpu.nvidia.com/ecc-errors",
                    "value": "uncorrectable",
                }
            ]
        ),
    ]
    """Which devices, and the taint they get; compiles to a DeviceTaintRule."""
