"""Cross-team isolation: nothing a team writes in its own file reaches objects outside its
namespaces, a grant cannot hand a team another's or the platform's namespaces, and names that
normalise to another's are caught."""

from __future__ import annotations

import shutil
from pathlib import Path, PurePosixPath

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler.diagnostics import CompileError
from compiler.model.priority import MAX_PRIORITY
from compiler.pipeline import Compiled, compile_policies
from tests import fleets
from tests.conftest import EXAMPLE, PolicyWriter, committed_steering

POOLS = """
    - {name: l40s, nodes: 2, gpu: L40S, gpusPerNode: 4, hostMemory: 512Gi, cpu: 64}
"""
TIER = fleets.tier("gpu", "{select: {models: [L40S]}}")
FLEET = fleets.HEADER + (
    "kind: Fleet\nmetadata: {name: f}\n"
    "spec: {gitops: {repoURL: 'https://git.example.com/x.git', argocdNamespace: gitops},\n"
    "  systemNamespaces: {kueue: queues}, reservedNamespaces: [monitoring]}\n"
)


def errors(root: Path) -> list[tuple[str, str, int]]:
    """(code, file below `root`, line) of every error compiling `root`."""
    with pytest.raises(CompileError) as caught:
        compile_policies(root)
    return [
        (d.code, Path(d.span.file).relative_to(root).as_posix(), d.span.line)
        for d in caught.value.diagnostics
        if d.span and d.severity.value == "error"
    ]


def base(**extra: str) -> dict[str, str]:
    files = {"c.yaml": fleets.cluster(pools=POOLS), "t.yaml": TIER, "l.yaml": fleets.LADDER}
    return {**files, **extra}


def test_a_team_cannot_claim_another_teams_namespace(write_policies: PolicyWriter) -> None:
    thief = fleets.team("b", "[]").replace("namespaces: [b]", "namespaces: [b, a]")
    root = write_policies(base(**{"a.yaml": fleets.team("a", "[]"), "b.yaml": thief}))
    assert errors(root) == [("GF205", "grants/b.yaml", 7)]


@pytest.mark.parametrize("spelling", ["A_Team", "a_team", "A-TEAM", " a-team "])
def test_a_namespace_spelled_to_normalise_to_anothers_is_the_same(
    write_policies: PolicyWriter, spelling: str
) -> None:
    thief = fleets.team("b", "[]").replace("namespaces: [b]", f"namespaces: [b, '{spelling}']")
    root = write_policies(base(**{"a.yaml": fleets.team("a-team", "[]"), "b.yaml": thief}))
    assert errors(root) == [("GF205", "grants/b.yaml", 7)]


@pytest.mark.parametrize("spelling", ["ML_Research", "ml_research", "ML-RESEARCH"])
def test_a_team_named_to_normalise_to_another_is_a_duplicate(
    write_policies: PolicyWriter, spelling: str
) -> None:
    twin = fleets.team("other", "[]").replace("{name: other}", f"{{name: {spelling}}}")
    root = write_policies(base(**{"a.yaml": fleets.team("ml-research", "[]"), "b.yaml": twin}))
    assert ("GF112", "b.yaml", 3) in errors(root)


@pytest.mark.parametrize(
    "namespace",
    [
        "kube-system",
        "Kube_System",
        "kube-public",
        "kube-anything",
        "default",
        "gitops",  # the fleet's Argo CD namespace
        "gpu-operator",  # the GPU operator's, the DRA driver's: their pods would lose GPUs
        "nvidia-dra-driver-gpu",
        "queues",  # the fleet's Kueue namespace
        "monitoring",  # listed by the fleet
    ],
)
def test_reserved_namespaces_are_refused(write_policies: PolicyWriter, namespace: str) -> None:
    team = fleets.team("a", "[]").replace("namespaces: [a]", f"namespaces: [a, {namespace}]")
    root = write_policies(base(**{"a.yaml": team, "fleet.yaml": FLEET}))
    assert errors(root) == [("GF123", "grants/a.yaml", 7)]


def test_system_namespaces_are_reserved_without_a_fleet(write_policies: PolicyWriter) -> None:
    team = fleets.team("a", "[]").replace("namespaces: [a]", "namespaces: [a, kueue-system]")
    root = write_policies(base(**{"a.yaml": team}))
    assert errors(root) == [("GF123", "grants/a.yaml", 7)]


@pytest.mark.parametrize(
    "smuggled",
    [
        fleets.LADDER.replace("{name: high, value: 1000}", "{name: system-x, value: 1000000}"),
        fleets.tier("stolen", "{select: {models: [L40S]}}"),
        fleets.HEADER
        + "kind: DeviceTaint\nmetadata: {name: t}\n"
        + "spec: {cluster: c1, pool: l40s, key: gpu.example.com/mine}\n",
        fleets.cluster("c2", pools=POOLS),
    ],
    ids=["PriorityLadder", "GpuTier", "DeviceTaint", "Cluster"],
)
def test_a_team_file_holds_only_teams(write_policies: PolicyWriter, smuggled: str) -> None:
    team_file = fleets.team("a", "[{tier: gpu, guaranteed: 1}]") + "---\n" + smuggled
    root = write_policies(base(**{"a.yaml": team_file}))
    codes = [code for code, *_ in errors(root)]
    assert "GF124" in codes


def test_a_team_file_cannot_hold_another_teams_team(write_policies: PolicyWriter) -> None:
    """Else the team reviewing the file could reshape (or zero) the other team's use of its
    grant: each team's own file is routed to that team alone."""
    files = base(
        **{
            "a.yaml": fleets.team("a", "[{tier: gpu, guaranteed: 1}]"),
            "b.yaml": fleets.team("b", "[]"),
        }
    )
    root = write_policies(files)
    other = (root / "b.yaml").read_text()
    (root / "b.yaml").unlink()
    (root / "a.yaml").write_text((root / "a.yaml").read_text() + "---\n" + other)
    assert [code for code, *_ in errors(root)] == ["GF124"]


@pytest.mark.parametrize("name", ["system-critical", "System_Critical", "SYSTEM-x"])
def test_system_priority_names_are_reserved(write_policies: PolicyWriter, name: str) -> None:
    ladder = fleets.LADDER.replace("{name: high,", f"{{name: {name},")
    root = write_policies(base(**{"l.yaml": ladder}))
    assert errors(root) == [("GF208", "l.yaml", 6)]


def test_a_team_cannot_use_a_system_priority(write_policies: PolicyWriter) -> None:
    team = fleets.team("a", "[]", "  priorities: [system-node-critical]\n")
    root = write_policies(base(**{"a.yaml": team}))
    assert errors(root) == [("GF203", "grants/a.yaml", 8)]


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        (MAX_PRIORITY, True),
        (MAX_PRIORITY + 1, False),
        (2_000_000_000, False),
        (-2_147_483_648, True),
        (-2_147_483_649, False),
        (2**63, False),
    ],
)
def test_priority_values_are_bounded(write_policies: PolicyWriter, value: int, ok: bool) -> None:
    ladder = fleets.LADDER.replace("value: 1000}", f"value: {value}}}")
    root = write_policies(base(**{"l.yaml": ladder}))
    if ok:
        compile_policies(root)
    else:
        assert errors(root) == [("GF107", "l.yaml", 6)]


def test_a_global_default_priority_is_an_error(write_policies: PolicyWriter) -> None:
    # Kubernetes writes a global default into every pod that names no class, also where the
    # team may not use it; teams declare their own default instead.
    ladder = fleets.LADDER.replace("preemption: Never}", "preemption: Never, default: true}")
    root = write_policies(base(**{"l.yaml": ladder}))
    assert errors(root) == [("GF208", "l.yaml", 7)]


def test_a_quota_cannot_name_another_teams_namespace(write_policies: PolicyWriter) -> None:
    thief = fleets.team("b", "[{tier: gpu, guaranteed: 1, namespace: a}]")
    root = write_policies(base(**{"a.yaml": fleets.team("a", "[]"), "b.yaml": thief}))
    assert ("GF207", "b.yaml", 6) in errors(root)  # the team file, where it asks


# A team's edit of its own file changes only what lies in its namespaces.

TEAM_FILE = "teams/data-science.yaml"
GRANT_FILE = "grants/data-science.yaml"
TEAM_NAMESPACES = {"data-science", "data-science-dev"}


def _allowed(path: str) -> bool:
    parts = PurePosixPath(path).parts
    if parts[0] == "plan" or parts[-1] == "kustomization.yaml" or path == "report.md":
        return True  # the solved plan, the lists of files, the capacity report
    if path == "argocd/appproject_gpufleet.yaml":
        return True  # lists the namespaces teams use (within their grants)
    if (
        len(parts) > 3
        and parts[2] == "_cluster"
        and (
            parts[3].startswith(
                ("cohort_", "validatingadmissionpolicy_", "mutatingadmissionpolicy_")
            )
            or parts[3] in {f"clusterqueue_{n}.yaml" for n in TEAM_NAMESPACES}
        )
    ):
        return True  # objects that list every team's grants, and the team's own queue
    if parts[0] != "clusters":
        return False
    if parts[2] in TEAM_NAMESPACES:
        return True
    return parts[2] == "_cluster" and parts[3] in {f"namespace_{n}.yaml" for n in TEAM_NAMESPACES}


@pytest.fixture(scope="module")
def wider_grant(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The example with data-science granted a second namespace and 20 (limit 28) devices by
    the platform, and what it compiles to."""
    root = tmp_path_factory.mktemp("granted") / "policies"
    shutil.copytree(EXAMPLE, root)
    grant = (root / GRANT_FILE).read_text()
    grant = grant.replace(
        "namespaces: [data-science]", "namespaces: [data-science, data-science-dev]"
    )
    (root / GRANT_FILE).write_text(
        grant.replace("guaranteed: 16, limit: 24", "guaranteed: 20, limit: 28")
    )
    team = (
        (root / TEAM_FILE).read_text().replace("gang: 2", "gang: 2\n      namespace: data-science")
    )
    (root / TEAM_FILE).write_text(  # with two namespaces, its shared claim must name one too
        team.replace(
            "clusters: [prod-west]", "clusters: [prod-west]\n      namespace: data-science"
        )
    )
    return root, compile_policies(root, previous=committed_steering()).tree


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    guaranteed=st.integers(0, 24),
    extra=st.integers(0, 8),
    gang=st.sampled_from([1, 2, 4]),
    second_namespace=st.booleans(),
)
def test_a_teams_own_edits_change_only_its_namespaces(
    wider_grant: tuple[Path, dict[str, str]],
    tmp_path_factory: pytest.TempPathFactory,
    guaranteed: int,
    extra: int,
    gang: int,
    second_namespace: bool,
) -> None:
    granted, before = wider_grant
    root = tmp_path_factory.mktemp("policies") / "policies"
    shutil.copytree(granted, root)
    where = "data-science-dev" if second_namespace else "data-science"
    uses = (
        f"  quotas:\n    - {{tier: general, namespace: {where}, guaranteed: {guaranteed},"
        f" limit: {guaranteed + extra}, gang: {gang}}}\n"
    )
    text = (root / TEAM_FILE).read_text()
    (root / TEAM_FILE).write_text(text[: text.index("spec:")] + "spec:\n" + uses)
    try:
        changed = compile_policies(root, previous=committed_steering()).tree
    except CompileError as error:
        errors = {d.code for d in error.diagnostics if d.severity.value == "error"}
        # infeasible (GF403: a gang beyond the topology), not whole gangs, or beyond the grant
        assert errors <= {"GF401", "GF403", "GF213", "GF218"}, error.diagnostics
        assert "GF218" not in errors or guaranteed > 20 or guaranteed + extra > 28
        return
    touched = {p for p in before.keys() | changed.keys() if before.get(p) != changed.get(p)}
    assert all(_allowed(p) for p in touched), sorted(p for p in touched if not _allowed(p))


def test_each_team_namespace_binds_the_declared_group_to_the_team_role(
    compiled_example: Compiled,
) -> None:
    fleet = compiled_example.fleet.fleet
    assert fleet is not None
    found = 0
    for cluster in compiled_example.fleet.clusters:
        for team in cluster.teams:
            for namespace in team.spec.namespaces:
                path = f"clusters/{cluster.name}/{namespace}/rolebinding_gpufleet-team.yaml"
                binding = yaml.safe_load(compiled_example.tree[path])
                assert binding["roleRef"]["name"] == fleet.spec.team_role == "edit"
                assert binding["subjects"] == [
                    {
                        "apiGroup": "rbac.authorization.k8s.io",
                        "kind": "Group",
                        "name": team.spec.group,
                    }
                ]
                found += 1
    bindings = [p for p in compiled_example.tree if "/rolebinding_" in p]
    assert len(bindings) == found  # in team namespaces only
