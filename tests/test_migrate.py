"""`gpufleet migrate`: a fleet written before grants compiles to the same objects after it.

The oracle is the same fleet written by hand in the grant layout: both must compile to the
same objects (provenance annotations aside, since they name the files), the grants must hold
exactly what the team files granted themselves, and a second run must change nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from compiler.migrate import migrate
from compiler.pipeline import compile_policies
from tests import fleets
from tests.conftest import PolicyWriter

SOURCE = "gpufleet.dev/source"
POOLS = """
    - {name: l40s, nodes: 4, gpu: L40S, gpusPerNode: 4, hostMemory: 512Gi, cpu: 64}
"""
COMMON = {
    "clusters/c1.yaml": fleets.cluster(pools=POOLS),
    "tiers/gpu.yaml": fleets.tier("gpu", "{select: {models: [L40S]}}"),
}
LEGACY_FLEET = (
    fleets.HEADER
    + """kind: Fleet
metadata: {name: f}
spec:
  gitops: {repoURL: "https://git.example.com/x.git"}
  teams:
    serving: {group: serving-users}
---
"""
    + fleets.LADDER
)
LEGACY_TEAMS = {
    "teams/serving.yaml": fleets.HEADER
    + """kind: Team
metadata:
  name: serving
  description: Online inference.
spec:
  # Two namespaces share the tier.
  namespaces: [serving, serving-canary]
  quotas:
    - {tier: gpu, namespace: serving, guaranteed: 4, limit: 6}
    - {tier: gpu, namespace: serving-canary, guaranteed: 2}
  priorities: [high, low]
  defaultPriority: low
  memoryQoS: guaranteed  # the team's choice, stays
  tolerations:
    - {key: example.com/burn-in, operator: Exists, effect: NoSchedule}
  cohort: inference
""",
    "teams/batch.yaml": fleets.HEADER
    + """kind: Team
metadata: {name: batch}
spec:
  namespaces: [batch]
  quotas:
    - {tier: gpu, guaranteed: 4, limit: 8, gang: 2}
  priorities: [low]
  adminAccess: true
""",
}
GRANT_LAYOUT = {
    "fleet.yaml": LEGACY_FLEET.replace("  teams:\n    serving: {group: serving-users}\n", ""),
    "grants/serving.yaml": fleets.HEADER
    + """kind: TeamGrant
metadata: {name: serving}
spec:
  group: serving-users
  namespaces: [serving, serving-canary]
  quotas: [{tier: gpu, guaranteed: 6, limit: 8}]
  priorities: [high, low]
  tolerations: [{key: example.com/burn-in, operator: Exists, effect: NoSchedule}]
  cohort: inference
""",
    "grants/batch.yaml": fleets.HEADER
    + """kind: TeamGrant
metadata: {name: batch}
spec:
  namespaces: [batch]
  quotas: [{tier: gpu, guaranteed: 4, limit: 8}]
  priorities: [low]
  adminAccess: true
""",
    "teams/serving.yaml": fleets.HEADER
    + """kind: Team
metadata: {name: serving}
spec:
  quotas:
    - {tier: gpu, namespace: serving, guaranteed: 4, limit: 6}
    - {tier: gpu, namespace: serving-canary, guaranteed: 2}
  defaultPriority: low
  memoryQoS: guaranteed
""",
    "teams/batch.yaml": fleets.HEADER
    + """kind: Team
metadata: {name: batch}
spec:
  quotas: [{tier: gpu, gang: 2}]
""",
}

Run = Callable[..., tuple[int, str, str]]


def _objects(root: Path) -> dict[str, Any]:
    """Every compiled file's documents, provenance annotations removed."""
    found = {}
    for path, text in compile_policies(root).tree.items():
        if not path.endswith(".yaml"):
            continue
        documents = list(yaml.safe_load_all(text))
        for document in documents:
            if isinstance(document, dict):
                annotations = document.get("metadata", {}).get("annotations", {})
                annotations.pop(SOURCE, None)
        found[path] = documents
    return found


def test_a_migrated_fleet_compiles_to_what_the_grant_layout_does(
    write_policies: PolicyWriter, run_cli: Run, tmp_path: Path
) -> None:
    legacy = write_policies({**COMMON, "fleet.yaml": LEGACY_FLEET, **LEGACY_TEAMS}, migrate=False)
    code, out, _ = run_cli("migrate", "--check", "--policies", legacy)
    assert code == 1 and "would write" in out
    code, out, err = run_cli("migrate", "--policies", legacy)
    assert code == 0, err
    assert sorted(p.relative_to(legacy).as_posix() for p in legacy.rglob("grants/*")) == [
        "grants/batch.yaml",
        "grants/serving.yaml",
    ]
    migrated = _objects(legacy)

    by_hand = tmp_path / "by-hand" / "policies"  # origins name the directory
    for relative, text in {**COMMON, **GRANT_LAYOUT}.items():
        (by_hand / relative).parent.mkdir(parents=True, exist_ok=True)
        (by_hand / relative).write_text(text)
    assert migrated == _objects(by_hand)


def test_the_grant_holds_exactly_what_the_team_granted_itself(write_policies: PolicyWriter) -> None:
    root = write_policies({**COMMON, "fleet.yaml": LEGACY_FLEET, **LEGACY_TEAMS})
    grant = yaml.safe_load((root / "grants/serving.yaml").read_text())
    expected = yaml.safe_load(GRANT_LAYOUT["grants/serving.yaml"])
    assert grant == expected
    fleet = list(yaml.safe_load_all((root / "fleet.yaml").read_text()))
    assert "teams" not in fleet[0]["spec"]


def test_the_team_file_keeps_its_comments_and_its_own_choices(
    write_policies: PolicyWriter,
) -> None:
    root = write_policies({**COMMON, "fleet.yaml": LEGACY_FLEET, **LEGACY_TEAMS})
    text = (root / "teams/serving.yaml").read_text()
    assert "memoryQoS: guaranteed  # the team's choice, stays" in text
    assert "description: Online inference." in text
    team = yaml.safe_load(text)["spec"]
    assert set(team) == {"quotas", "defaultPriority", "memoryQoS"}


def test_a_second_migration_changes_nothing(write_policies: PolicyWriter, run_cli: Run) -> None:
    root = write_policies({**COMMON, "fleet.yaml": LEGACY_FLEET, **LEGACY_TEAMS})
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    code, out, _ = run_cli("migrate", "--policies", root)
    assert code == 0 and "nothing to migrate" in out
    assert before == {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_the_example_fleet_is_migrated() -> None:
    from compiler.migrate import plan_migration
    from tests.conftest import EXAMPLE

    assert plan_migration(EXAMPLE).files == {}


def test_a_grant_file_in_the_way_stops_the_migration_before_writing(
    write_policies: PolicyWriter, run_cli: Run
) -> None:
    root = write_policies(
        {**COMMON, "fleet.yaml": LEGACY_FLEET, **LEGACY_TEAMS, "grants/batch.yaml": "# notes\n"},
        migrate=False,
    )
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    code, _, err = run_cli("migrate", "--policies", root)
    assert code == 2 and "GF502" in err
    assert before == {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_a_fleet_written_before_grants_says_to_migrate(
    write_policies: PolicyWriter, run_cli: Run
) -> None:
    root = write_policies({**COMMON, "fleet.yaml": LEGACY_FLEET, **LEGACY_TEAMS}, migrate=False)
    code, _, err = run_cli("check", "--policies", root)
    assert code == 2 and "GF106" in err and "run `gpufleet migrate`" in err


def test_a_group_for_a_team_already_granted_moves_into_its_grant(
    write_policies: PolicyWriter,
) -> None:
    root = write_policies({**COMMON, **GRANT_LAYOUT}, migrate=False)
    grant = root / "grants/serving.yaml"
    grant.write_text(grant.read_text().replace("  group: serving-users\n", ""))
    (root / "fleet.yaml").write_text(LEGACY_FLEET)
    migrate(root)
    assert yaml.safe_load(grant.read_text())["spec"]["group"] == "serving-users"
    fleet = next(yaml.safe_load_all((root / "fleet.yaml").read_text()))
    assert "teams" not in fleet["spec"]


def test_what_migrate_cannot_move_safely_is_refused_before_writing(
    write_policies: PolicyWriter, run_cli: Run
) -> None:
    anchored = LEGACY_TEAMS["teams/batch.yaml"].replace(
        "    - {tier: gpu, guaranteed: 4, limit: 8, gang: 2}",
        "    - &q {tier: gpu, guaranteed: 4, limit: 8, gang: 2}",
    )
    conflicting = GRANT_LAYOUT["grants/serving.yaml"].replace("serving-users", "someone-else")
    unknown = LEGACY_FLEET.replace("serving: {group: serving-users}", "gone: {group: g}")
    null_spec = LEGACY_FLEET.replace(
        '  gitops: {repoURL: "https://git.example.com/x.git"}\n  teams:\n    serving: '
        "{group: serving-users}\n",
        "",
    ).replace("spec:\n---", "spec:\n  teams: [serving]\n---")
    cases = {
        "GF103": {**LEGACY_TEAMS, "teams/batch.yaml": anchored, "fleet.yaml": LEGACY_FLEET},
        "GF107": {"grants/serving.yaml": conflicting, "fleet.yaml": LEGACY_FLEET},
        "GF219": {**LEGACY_TEAMS, "fleet.yaml": unknown},
        "GF112": {
            **LEGACY_TEAMS,
            "teams/again.yaml": LEGACY_TEAMS["teams/batch.yaml"],
            "fleet.yaml": LEGACY_FLEET,
        },
    }
    cases["GF107 "] = {**LEGACY_TEAMS, "fleet.yaml": null_spec}
    for code, files in cases.items():
        root = write_policies({**COMMON, **files}, migrate=False)
        before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
        status, _, err = run_cli("migrate", "--policies", root)
        assert status in (1, 2) and code.strip() in err and "Traceback" not in err, (code, err)
        assert before == {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}, code
