"""Small policy documents for tests, built as text so every test reads as the YAML it feeds."""

from __future__ import annotations

import contextlib
import textwrap
from collections.abc import Mapping
from pathlib import Path

from compiler.diagnostics import CompileError
from compiler.migrate import migrate

HEADER = "apiVersion: gpufleet.dev/v1alpha1\n"


TAINT_RULES_ON_1_36 = (
    "{featureGates: {DRADeviceTaintRules: true},"
    " runtimeConfig: {resource.k8s.io/v1beta2/devicetaintrules: true}}"
)
"""The `apiServer` of a 1.36 control plane that serves DeviceTaintRules."""


def cluster(
    name: str = "c1",
    pools: str = "",
    version: str = "1.36",
    api_server: str | None = None,
    driver_version: str | None = None,
) -> str:
    """A Cluster document; `pools` is the YAML list body of nodePools, `api_server` the flow
    YAML of its `apiServer`, `driver_version` the NVIDIA DRA driver release it runs."""
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
{f"  apiServer: {api_server}{chr(10)}" if api_server else ""}\
{f'  driverVersion: "{driver_version}"{chr(10)}' if driver_version else ""}  nodePools:{pools}"""
    )


def tier(name: str, spec: str) -> str:
    """A GpuTier document with the given spec body (flow or block YAML)."""
    return HEADER + f"kind: GpuTier\nmetadata: {{name: {name}}}\nspec: {spec}\n"


def write_tree(root: Path, files: Mapping[str, str], migrate_teams: bool = True) -> Path:
    """Write {relative path: YAML text} below `root` (dedented) and return it.

    Tests write a team as one `team()` document that says everything (the layout before
    grants), because that reads as the fleet the test is about; `gpufleet migrate` then moves
    each such team's entitlements into its grant, as a user's fleet would be migrated, so
    every one of these trees also exercises the migration. `migrate_teams=False` leaves the
    files exactly as given (a tree that is not valid policy is left as written either way).
    """
    for relative, text in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    if migrate_teams:
        with contextlib.suppress(CompileError):
            migrate(root)
    return root


def team(name: str, quotas: str, extra: str = "") -> str:
    """A Team document owning namespace `name`, with a flow list of quotas, in the layout
    before grants (`write_tree` migrates it)."""
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
