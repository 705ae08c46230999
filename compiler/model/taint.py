"""DeviceTaint: mark devices (a broken GPU, a pool in maintenance) for tolerant teams only."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from compiler.model.base import LabelValue, Name, PolicyObject, QualifiedName, Strict
from compiler.model.tier import Selector


class DeviceTaintSpec(Strict):
    """Which devices (cluster, optionally pool, node index, device index or a selector) and
    the taint to put on them."""

    cluster: Name
    pool: Name | None = None
    node: Annotated[int, Field(ge=0, le=100_000)] | None = None
    device: Annotated[int, Field(ge=0, le=63)] | None = None
    select: Selector | None = None
    key: QualifiedName
    value: LabelValue = ""
    effect: Literal["NoSchedule", "NoExecute", "None"] = "NoSchedule"

    @model_validator(mode="after")
    def _node_needs_pool(self) -> DeviceTaintSpec:
        if self.node is not None and self.pool is None:
            raise ValueError("`node` is an index within a pool: give `pool` too")
        return self


class DeviceTaint(PolicyObject):
    """A device taint; compiles to a DeviceTaintRule and removes capacity from intolerant teams."""

    kind: Literal["DeviceTaint"]
    spec: DeviceTaintSpec
