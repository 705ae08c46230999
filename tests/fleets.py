"""Small policy documents for tests, built as text so every test reads as the YAML it feeds."""

from __future__ import annotations

HEADER = "apiVersion: gpufleet.dev/v1alpha1\n"


TAINT_RULES_ON_1_36 = (
    "{featureGates: {DRADeviceTaintRules: true},"
    " runtimeConfig: {resource.k8s.io/v1beta2/devicetaintrules: true}}"
)
"""The `apiServer` of a 1.36 control plane that serves DeviceTaintRules."""


def cluster(
    name: str = "c1", pools: str = "", version: str = "1.36", api_server: str | None = None
) -> str:
    """A Cluster document; `pools` is the YAML list body of nodePools, `api_server` the flow
    YAML of its `apiServer`."""
    pools = (
        pools
        or """
    - {name: h100, nodes: 2, gpu: H100-80GB, gpusPerNode: 8, hostMemory: 2Ti, cpu: 224}
"""
    )
    return (
        HEADER
        + f"""kind: Cluster
metadata: {{name: {name}}}
spec:
  kubernetesVersion: "{version}"
{f"  apiServer: {api_server}{chr(10)}" if api_server else ""}  nodePools:{pools}"""
    )


def tier(name: str, spec: str) -> str:
    """A GpuTier document with the given spec body (flow or block YAML)."""
    return HEADER + f"kind: GpuTier\nmetadata: {{name: {name}}}\nspec: {spec}\n"


def team(name: str, quotas: str, extra: str = "") -> str:
    """A Team document owning namespace `name`, with a flow list of quotas."""
    return HEADER + (
        f"kind: Team\nmetadata: {{name: {name}}}\n"
        f"spec:\n  namespaces: [{name}]\n  quotas: {quotas}\n{extra}"
    )


LADDER = (
    HEADER
    + """kind: PriorityLadder
metadata: {name: default}
spec:
  levels:
    - {name: high, value: 1000}
    - {name: low, value: 10, preemption: Never}
"""
)
