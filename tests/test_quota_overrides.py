"""Per-cluster overrides of a grant's guarantee and limit (`quotaOverrides`): the solver, the
ResourceQuotas, the Kueue quotas and the report use the cluster's value; an override of what
the grant does not give, or in a cluster that does not exist, is refused where it is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from compiler.pipeline import compile_policies
from tests import fleets
from tests.conftest import PolicyWriter
from tests.test_grants import refusals

POOLS = """
    - {name: l40s, nodes: 4, gpu: L40S, gpusPerNode: 4, hostMemory: 512Gi, cpu: 64}
"""
"""16 L40S per cluster."""


def _cluster(name: str) -> str:
    return fleets.cluster(name, pools=POOLS).replace(
        "  nodePools:", "  kueue: {enabled: true}\n  nodePools:"
    )


def _grant(
    overrides: str = "", quotas: str = "    - {tier: gpu, guaranteed: 8, limit: 12}\n"
) -> str:
    return (
        fleets.HEADER
        + f"""kind: TeamGrant
metadata: {{name: ds}}
spec:
  namespaces: [ds]
  clusters: [c1, c2]
  quotas:
{quotas}  priorities: [low]
{"  quotaOverrides:" + chr(10) + overrides if overrides else ""}"""
    )


SMALLER_IN_C2 = "    - {cluster: c2, tier: gpu, guaranteed: 4, limit: 6}\n"


def _tree(grant: str, team: str | None = None) -> dict[str, str]:
    files = {
        "clusters/c1.yaml": _cluster("c1"),
        "clusters/c2.yaml": _cluster("c2"),
        "clusters/c3.yaml": _cluster("c3"),
        "tiers/gpu.yaml": fleets.tier("gpu", "{select: {models: [L40S]}}"),
        "tiers/other.yaml": fleets.tier("other", "{select: {models: [L40S]}}"),
        "ladder.yaml": fleets.LADDER,
        "grants/ds.yaml": grant,
    }
    if team is not None:
        files["teams/ds.yaml"] = (
            fleets.HEADER + f"kind: Team\nmetadata: {{name: ds}}\nspec:\n{team}"
        )
    return files


def _line(root: Path, relative: str, span_line: int) -> str:
    return (root / relative).read_text().splitlines()[span_line - 1]


def test_every_output_uses_the_cluster_s_value(write_policies: PolicyWriter) -> None:
    tree = compile_policies(write_policies(_tree(_grant(SMALLER_IN_C2)), migrate=False)).tree
    for cluster, guaranteed, limit in (("c1", 8, 12), ("c2", 4, 6)):
        plan = json.loads(tree[f"plan/{cluster}.json"])
        assert plan["assignments"] == {"ds/ds/gpu": {"l40s/gpu": guaranteed}}
        quota = yaml.safe_load(tree[f"clusters/{cluster}/ds/resourcequota_gpufleet-devices.yaml"])
        assert quota["spec"]["hard"]["gpu.deviceclass.resource.k8s.io/devices"] == str(limit)
        queue = yaml.safe_load(tree[f"clusters/{cluster}/_cluster/clusterqueue_ds.yaml"])
        (devices, _host) = queue["spec"]["resourceGroups"]
        (resource,) = devices["flavors"][0]["resources"]
        assert (resource["nominalQuota"], resource["borrowingLimit"]) == (
            str(guaranteed),
            str(limit - guaranteed),
        )
        row = next(
            line
            for line in tree["report.md"].splitlines()
            if line.startswith("| ds |") and f"| {cluster} |" in line
        )
        assert f"| gpu | {guaranteed} | {limit} |" in row, row


def test_an_override_of_the_guarantee_alone_keeps_the_grant_s_limit(
    write_policies: PolicyWriter,
) -> None:
    grant = _grant("    - {cluster: c2, tier: gpu, guaranteed: 10}\n")
    tree = compile_policies(write_policies(_tree(grant), migrate=False)).tree
    quota = yaml.safe_load(tree["clusters/c2/ds/resourcequota_gpufleet-devices.yaml"])
    assert quota["spec"]["hard"]["gpu.deviceclass.resource.k8s.io/devices"] == "12"
    assert json.loads(tree["plan/c2.json"])["assignments"] == {"ds/ds/gpu": {"l40s/gpu": 10}}


def test_a_team_file_narrows_the_cluster_s_value(write_policies: PolicyWriter) -> None:
    # The team uses the tier ganged by 2 and splits nothing: each cluster keeps its own value.
    team = "  quotas: [{tier: gpu, gang: 2}]\n"
    tree = compile_policies(write_policies(_tree(_grant(SMALLER_IN_C2), team), migrate=False)).tree
    assert json.loads(tree["plan/c2.json"])["assignments"] == {"ds/ds/gpu": {"l40s/gpu": 4}}
    assert json.loads(tree["plan/c1.json"])["assignments"] == {"ds/ds/gpu": {"l40s/gpu": 8}}


def test_an_override_beyond_the_cluster_is_the_conflict(write_policies: PolicyWriter) -> None:
    grant = _grant("    - {cluster: c2, tier: gpu, guaranteed: 20, limit: 20}\n")
    root = write_policies(_tree(grant), migrate=False)
    (refusal,) = refusals(root)
    assert refusal.code == "GF401" and "c2" in refusal.message
    clauses = [refusal.span, *(span for _, span in refusal.related)]
    assert any(
        s is not None and "guaranteed: 20" in _line(root, "grants/ds.yaml", s.line) for s in clauses
    )


REFUSED = [
    # (what, grant overrides, team file, code, message part, text on the line pointed at)
    (
        "an unknown cluster",
        "    - {cluster: c9, tier: gpu, guaranteed: 4}\n",
        None,
        "GF204",
        "unknown cluster 'c9'",
        "cluster: c9",
    ),
    (
        "a cluster not granted",
        "    - {cluster: c3, tier: gpu, guaranteed: 4}\n",
        None,
        "GF252",
        "in cluster 'c3', which it does not grant",
        "cluster: c3",
    ),
    (
        "a tier not granted",
        "    - {cluster: c2, tier: other, guaranteed: 4}\n",
        None,
        "GF252",
        "in tier 'other', which it does not grant",
        "tier: other",
    ),
    (
        "a limit below the guarantee",
        "    - {cluster: c2, tier: gpu, guaranteed: 16}\n",
        None,
        "GF206",
        "in cluster 'c2': limit 12 is below the guarantee 16",
        "guaranteed: 16",
    ),
    (
        "one tier twice in a cluster",
        SMALLER_IN_C2 + "    - {cluster: c2, tier: gpu, limit: 9}\n",
        None,
        "GF212",
        "overrides tier 'gpu' in cluster 'c2' twice",
        "limit: 9",
    ),
    (
        "a team asking more than the cluster's grant",
        SMALLER_IN_C2,
        "  quotas: [{tier: gpu, guaranteed: 6}]\n",
        "GF218",
        "beyond the 4 its grant gives it in cluster c2",
        "guaranteed: 6",
    ),
    (
        "a cluster's guarantee not a whole number of gangs",
        "    - {cluster: c2, tier: gpu, guaranteed: 6}\n",
        "  quotas: [{tier: gpu, gang: 4}]\n",
        "GF213",
        "in cluster c2: guaranteed 6 is not a whole number of gangs of 4",
        "guaranteed: 6",
    ),
]


@pytest.mark.parametrize(
    ("overrides", "team", "code", "message", "line"),
    [r[1:] for r in REFUSED],
    ids=[r[0] for r in REFUSED],
)
def test_a_wrong_override_is_refused_where_it_is_written(
    write_policies: PolicyWriter,
    overrides: str,
    team: str | None,
    code: str,
    message: str,
    line: str,
) -> None:
    root = write_policies(_tree(_grant(overrides), team), migrate=False)
    (refusal,) = refusals(root)
    assert (refusal.code, message in refusal.message) == (code, True), refusal.message
    assert refusal.span is not None
    written = Path(refusal.span.file).relative_to(root).as_posix()
    assert line in _line(root, written, refusal.span.line)
    if code == "GF218":  # the team's request, with the override it exceeds beside it
        assert written == "teams/ds.yaml"
        ((_, granted),) = refusal.related
        assert "guaranteed: 4" in _line(root, "grants/ds.yaml", granted.line)
