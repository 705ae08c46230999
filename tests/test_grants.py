"""Grants: a team's own file shapes and narrows what the platform grants, never more.

Each refusal is asked for the way a team member would, editing only the team's own file,
and must point at both the request and the grant it exceeds. What a file may do (narrow,
split between its granted namespaces, leave fields to the grant) is checked on what the
compiled cluster would enforce.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from compiler.diagnostics import CompileError, Diagnostic
from compiler.pipeline import compile_policies
from tests import fleets
from tests.conftest import PolicyWriter

POOLS = """
    - {name: l40s, nodes: 4, gpu: L40S, gpusPerNode: 4, hostMemory: 512Gi, cpu: 64}
"""
GRANT = (
    fleets.HEADER
    + """kind: TeamGrant
metadata: {name: ds}
spec:
  group: ds-users
  namespaces: [ds, ds-dev]
  clusters: [c1]
  quotas:
    - {tier: gpu, guaranteed: 4, limit: 8}
  priorities: [low]
  tolerations:
    - {key: example.com/burn-in, operator: Equal, value: "yes", effect: NoSchedule}
  cohort: research
"""
)


def tree(team_spec: str | None, grant: str = GRANT) -> dict[str, str]:
    """A cluster of 16 L40S, tier `gpu`, the ladder, team ds's grant and its own file."""
    files = {
        "clusters/c1.yaml": fleets.cluster(pools=POOLS),
        "clusters/c2.yaml": fleets.cluster("c2", pools=POOLS),
        "tiers/gpu.yaml": fleets.tier("gpu", "{select: {models: [L40S]}}"),
        "tiers/other.yaml": fleets.tier("other", "{select: {models: [L40S]}}"),
        "ladder.yaml": fleets.LADDER,
        "grants/ds.yaml": grant,
    }
    if team_spec is not None:
        if "quotas:" not in team_spec:  # the grant's two namespaces: say where the tier goes
            team_spec += "  quotas: [{tier: gpu, namespace: ds}]\n"
        files["teams/ds.yaml"] = (
            fleets.HEADER + f"kind: Team\nmetadata: {{name: ds}}\nspec:\n{team_spec}"
        )
    return files


def refusals(root: Path) -> list[Diagnostic]:
    with pytest.raises(CompileError) as caught:
        compile_policies(root)
    return [d for d in caught.value.diagnostics if d.severity.value == "error"]


def line_of(root: Path, relative: str, text: str) -> int:
    """The 1-based line of `relative` that contains `text`."""
    lines = (root / relative).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


EXCEEDS = [
    ("namespaces", "  namespaces: [ds, gpu-operator-ish]\n", "gpu-operator-ish", "namespaces:"),
    ("clusters", "  clusters: [c1, c2]\n", "c2", "clusters:"),
    ("priorities", "  priorities: [low, high]\n", "high", "priorities:"),
    (
        "wider toleration (any value)",
        "  tolerations:\n    - {key: example.com/burn-in, operator: Exists, effect: NoSchedule}\n",
        "example.com/burn-in=*",
        "- {key: example.com/burn-in",
    ),
    (
        "wider toleration (any effect)",
        '  tolerations:\n    - {key: example.com/burn-in, operator: Equal, value: "yes"}\n',
        "example.com/burn-in=yes:*",
        "- {key: example.com/burn-in",
    ),
    (
        "another taint",
        "  tolerations:\n    - {key: example.com/ecc-errors, operator: Exists}\n",
        "ecc-errors",
        "- {key: example.com/burn-in",
    ),
    ("admin access", "  adminAccess: true\n", "adminAccess", "metadata: {name: ds}"),
    ("another cohort", "  cohort: training\n", "'training'", "cohort:"),
    (
        "an ungranted tier",
        "  quotas:\n    - {tier: gpu, namespace: ds}\n    - {tier: other, namespace: ds}\n",
        "'other'",
        "- {tier: gpu, guaranteed: 4",
    ),
    (
        "a bigger guarantee",
        "  quotas:\n    - {tier: gpu, namespace: ds, guaranteed: 8}\n",
        "8 guaranteed",
        "guaranteed: 4",
    ),
    (
        "a bigger limit",
        "  quotas:\n    - {tier: gpu, namespace: ds, limit: 10000000}\n",
        "to use up to 10000000 devices",
        "limit: 8",
    ),
    (
        "a split beyond the grant",
        "  quotas:\n    - {tier: gpu, namespace: ds, guaranteed: 3, limit: 4}\n"
        "    - {tier: gpu, namespace: ds-dev, guaranteed: 2, limit: 4}\n",
        "for 5 guaranteed devices",
        "guaranteed: 4",
    ),
]


@pytest.mark.parametrize(
    ("asked", "where", "granted"),
    [(e[1], e[2], e[3]) for e in EXCEEDS],
    ids=[e[0] for e in EXCEEDS],
)
def test_a_team_file_asking_beyond_its_grant_is_refused_at_both_places(
    write_policies: PolicyWriter, asked: str, where: str, granted: str
) -> None:
    root = write_policies(tree(asked), migrate=False)
    (refusal,) = refusals(root)
    assert refusal.code == "GF218"
    assert where in refusal.message
    assert refusal.span is not None and Path(refusal.span.file).name == "ds.yaml"
    assert "teams" in refusal.span.file
    first_asked = asked.splitlines()[0].strip()
    assert refusal.span.line >= line_of(root, "teams/ds.yaml", first_asked)
    ((note, grant_span),) = refusal.related
    assert note == "the grant it exceeds"
    assert "grants" in grant_span.file
    assert grant_span.line == line_of(root, "grants/ds.yaml", granted)


def test_a_team_without_a_grant_is_refused(write_policies: PolicyWriter) -> None:
    files = tree("  memoryQoS: guaranteed\n")
    del files["grants/ds.yaml"]
    files["teams/ds.yaml"] = files["teams/ds.yaml"].replace(
        "spec:\n", "spec:\n  namespaces: [ds]\n  priorities: [high]\n"
    )
    root = write_policies(files, migrate=False)
    (refusal,) = refusals(root)
    assert refusal.code == "GF219"
    assert refusal.span is not None and refusal.span.file.endswith("teams/ds.yaml")
    assert any("gpufleet migrate" in hint for hint in refusal.hints)


def test_a_split_must_say_each_share(write_policies: PolicyWriter) -> None:
    asked = "  quotas:\n    - {tier: gpu, namespace: ds}\n    - {tier: gpu, namespace: ds-dev}\n"
    root = write_policies(tree(asked), migrate=False)
    assert [r.code for r in refusals(root)] == ["GF228", "GF228"]


def _objects(root: Path, cluster: str = "c1") -> dict[tuple[str, str], dict]:
    compiled = compile_policies(root)
    found = {}
    for path, text in compiled.tree.items():
        if path.startswith(f"clusters/{cluster}/") and path.endswith(".yaml"):
            for document in yaml.safe_load_all(text):
                if isinstance(document, dict) and "kind" in document:
                    found[(document["kind"], path)] = document
    return found


def _hard(objects: dict[tuple[str, str], dict], namespace: str) -> dict[str, str]:
    (quota,) = [
        o
        for (kind, path), o in objects.items()
        if kind == "ResourceQuota"
        and o["metadata"]["name"] == "gpufleet-devices"
        and o["metadata"]["namespace"] == namespace
    ]
    return dict(quota["spec"]["hard"])


def test_a_grant_without_a_team_file_is_the_team_whole(write_policies: PolicyWriter) -> None:
    """The platform onboards a team with its grant alone; the team's file can come later."""
    one_namespace = GRANT.replace("namespaces: [ds, ds-dev]", "namespaces: [ds]")
    objects = _objects(write_policies(tree(None, one_namespace), migrate=False))
    hard = _hard(objects, "ds")
    assert hard["gpu.deviceclass.resource.k8s.io/devices"] == "8"
    bindings = [o for (kind, _), o in objects.items() if kind == "RoleBinding"]
    assert [b["subjects"][0]["name"] for b in bindings] == ["ds-users"]


def test_a_team_file_may_narrow_and_split_its_grant(write_policies: PolicyWriter) -> None:
    asked = (
        "  quotas:\n    - {tier: gpu, namespace: ds, guaranteed: 3, limit: 5}\n"
        "    - {tier: gpu, namespace: ds-dev, guaranteed: 1, limit: 3}\n"
        "  priorities: [low]\n  cohort: research\n"
    )
    objects = _objects(write_policies(tree(asked), migrate=False))
    assert _hard(objects, "ds")["gpu.deviceclass.resource.k8s.io/devices"] == "5"
    assert _hard(objects, "ds-dev")["gpu.deviceclass.resource.k8s.io/devices"] == "3"


def test_a_team_file_may_leave_a_granted_namespace_unused(write_policies: PolicyWriter) -> None:
    asked = "  namespaces: [ds]\n  quotas:\n    - {tier: gpu, guaranteed: 2}\n"
    objects = _objects(write_policies(tree(asked), migrate=False))
    namespaces = sorted(
        o["metadata"]["name"] for (kind, _), o in objects.items() if kind == "Namespace"
    )
    assert namespaces == ["ds"]
    assert _hard(objects, "ds")["gpu.deviceclass.resource.k8s.io/devices"] == "8"


def test_the_grant_sets_the_namespaces_pod_security(write_policies: PolicyWriter) -> None:
    grant = GRANT.replace("  cohort: research\n", "  cohort: research\n  podSecurity: restricted\n")
    grant = grant.replace("namespaces: [ds, ds-dev]", "namespaces: [ds]")
    objects = _objects(write_policies(tree(None, grant), migrate=False))
    labels = [o["metadata"]["labels"] for (kind, _), o in objects.items() if kind == "Namespace"]
    assert {label["pod-security.kubernetes.io/enforce"] for label in labels} == {"restricted"}


def test_a_grant_allowing_device_plugins_lifts_the_nvidia_gpu_quota(
    write_policies: PolicyWriter,
) -> None:
    one = GRANT.replace("namespaces: [ds, ds-dev]", "namespaces: [ds]")
    assert (
        _hard(_objects(write_policies(tree(None, one), migrate=False)), "ds")[
            "requests.nvidia.com/gpu"
        ]
        == "0"
    )
    allowed = one + "  allow: {devicePluginResources: true}\n"
    hard = _hard(_objects(write_policies(tree(None, allowed), migrate=False)), "ds")
    assert "requests.nvidia.com/gpu" not in hard


def test_a_team_file_cannot_set_its_own_pod_security_or_allowances(
    write_policies: PolicyWriter,
) -> None:
    for field in (
        "  podSecurity: privileged\n",
        "  allow: {gpuRuntimeClasses: true}\n",
        "  group: system:masters\n",
        '  owners: ["@someone"]\n',
    ):
        root = write_policies(tree(field), migrate=False)
        (refusal,) = refusals(root)
        assert refusal.code == "GF106", field


def test_a_grant_below_its_own_guarantee_is_reported_once(write_policies: PolicyWriter) -> None:
    grant = GRANT.replace("guaranteed: 4, limit: 8", "guaranteed: 4, limit: 2")
    root = write_policies(tree("  quotas: [{tier: gpu, namespace: ds, gang: 2}]\n", grant), False)
    assert [r.code for r in refusals(root)] == ["GF206"]  # no GF218 for the team's file


def test_a_namespace_two_grants_give_is_refused_even_if_a_team_leaves_it_unused(
    write_policies: PolicyWriter,
) -> None:
    other = GRANT.replace("{name: ds}", "{name: ops}").replace("[ds, ds-dev]", "[ops, ds-dev]")
    files = tree("  namespaces: [ds]\n") | {"grants/ops.yaml": other}
    refusal = next(r for r in refusals(write_policies(files, migrate=False)) if r.code == "GF205")
    assert refusal.span is not None and "grants" in refusal.span.file


def test_a_request_beyond_a_field_the_grant_leaves_out_points_at_the_grants_name(
    write_policies: PolicyWriter,
) -> None:
    grant = GRANT.replace("  priorities: [low]\n", "")
    root = write_policies(tree("  priorities: [low]\n", grant), migrate=False)
    (refusal,) = [r for r in refusals(root) if r.code == "GF218"]
    ((_, granted),) = refusal.related
    assert granted.line == line_of(root, "grants/ds.yaml", "metadata: {name: ds}")
