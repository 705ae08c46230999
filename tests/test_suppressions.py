"""Suppressions (issue 18): the platform silences one warning code per scope in the Fleet,
with a required reason; errors cannot be silenced, an unused suppression is a warning, and
the report lists each suppression with what it silenced."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler.diagnostics import CompileError, Diagnostic, Span
from compiler.ir import Silenced
from compiler.model.suppression import Suppression
from compiler.pipeline import check_policies, compile_policies
from compiler.resolve.suppressions import apply_suppressions
from tests.conftest import PolicyWriter
from tests.fleets import HEADER, LADDER, TAINT_RULES_ON_1_36, cluster, team, tier
from tests.test_cli import Run

TAINT = HEADER + (
    "kind: DeviceTaint\nmetadata: {name: broken}\n"
    "spec: {cluster: c1, pool: h100, node: 0, device: 1, key: example.com/ecc,\n"
    "       effect: NoSchedule}\n"
)
"""A device taint no team tolerates: warning GF217 about cluster c1."""


def fleet(suppressions: str) -> str:
    """A Fleet document with the given YAML list of suppressions."""
    return HEADER + (
        "kind: Fleet\nmetadata: {name: f}\n"
        "spec:\n  gitops: {repoURL: https://git.example.com/fleet.git}\n"
        f"  suppressions:\n{suppressions}"
    )


def policies(write: PolicyWriter, suppressions: str) -> Path:
    """Two clusters, an unused tier `spare` (GF211, fleet-wide) and an untolerated taint in
    c1 (GF217, about c1), and the given suppressions."""
    return write(
        {
            "c1.yaml": cluster("c1", api_server=TAINT_RULES_ON_1_36),
            "c2.yaml": cluster("c2"),
            "ladder.yaml": LADDER,
            "training.yaml": tier("training", "{select: {models: [H100]}}"),
            "spare.yaml": tier("spare", "{select: {models: [H100]}}"),
            "taint.yaml": TAINT,
            "teams/research.yaml": team("research", "[{tier: training, guaranteed: 4, limit: 8}]")
            + "  priorities: [high]\n",
            "fleet.yaml": fleet(suppressions),
        }
    )


def codes(diagnostics: tuple[Diagnostic, ...] | list[Diagnostic]) -> list[str]:
    return sorted(d.code for d in diagnostics)


def test_without_suppressions_both_warnings_are_reported(write_policies: PolicyWriter) -> None:
    fleet_, _ = check_policies(policies(write_policies, "    []\n"))
    assert codes(fleet_.warnings) == ["GF211", "GF217"]
    assert fleet_.suppressions == ()


def test_a_fleet_wide_suppression_silences_its_code_only(write_policies: PolicyWriter) -> None:
    fleet_, _ = check_policies(
        policies(write_policies, "    - {code: GF211, reason: kept for the next purchase}\n")
    )
    assert codes(fleet_.warnings) == ["GF217"]
    (silenced,) = fleet_.suppressions
    assert silenced.scope == "fleet-wide"
    assert [f.message for f in silenced.findings] == [
        "tier 'spare' is not used by any team's quota"
    ]
    assert silenced.span.file.endswith("fleet.yaml") and silenced.span.line == 7


def test_a_cluster_suppression_silences_that_clusters_findings(
    write_policies: PolicyWriter,
) -> None:
    fleet_, _ = check_policies(
        policies(
            write_policies, "    - {code: GF217, cluster: c1, reason: RMA ticket 4711 is open}\n"
        )
    )
    assert codes(fleet_.warnings) == ["GF211"]
    (silenced,) = fleet_.suppressions
    assert silenced.scope == "cluster c1" and codes(silenced.findings) == ["GF217"]


def test_a_suppression_for_another_cluster_silences_nothing_and_is_warned_about(
    write_policies: PolicyWriter,
) -> None:
    fleet_, _ = check_policies(
        policies(write_policies, "    - {code: GF217, cluster: c2, reason: not this one}\n")
    )
    assert codes(fleet_.warnings) == ["GF211", "GF217", "GF261"]
    (unused,) = [w for w in fleet_.warnings if w.code == "GF261"]
    assert "GF217 (cluster c2) silenced no warning" in unused.message
    assert unused.span is not None and (unused.span.line, unused.span.column) == (7, 7)


def test_a_cluster_warning_is_not_silenced_by_a_team_scope(write_policies: PolicyWriter) -> None:
    fleet_, _ = check_policies(
        policies(write_policies, "    - {code: GF217, team: research, reason: wrong scope}\n")
    )
    assert codes(fleet_.warnings) == ["GF211", "GF217", "GF261"]


def test_team_and_cluster_scopes_match_the_findings_subjects() -> None:
    """A scope matches a finding about that cluster or team; both together match only a
    finding about the team in that cluster."""
    finding = Diagnostic("GF601", "fallback left out", Span("t.yaml", 3, 5), cluster="c1", team="a")
    other_team = Diagnostic(
        "GF601", "fallback left out", Span("t.yaml", 4, 5), cluster="c1", team="b"
    )
    both = Silenced(Suppression(code="GF601", reason="r", cluster="c1", team="a"), Span("f"), ())
    kept, (silenced,) = apply_suppressions([both], [finding, other_team], report_unused=True)
    assert kept == [other_team] and silenced.findings == (finding,)
    assert silenced.scope == "cluster c1, team a"
    elsewhere = Silenced(
        Suppression(code="GF601", reason="r", cluster="c2", team="a"), Span("f"), ()
    )
    kept, _ = apply_suppressions([elsewhere], [finding], report_unused=True)
    assert codes(kept) == ["GF261", "GF601"]


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ("{code: GF202, reason: x}", "GF202 (unknown-tier) is an error"),
        ("{code: GF999, reason: x}", "GF999 is not a gpufleet diagnostic code"),
        ("{code: GF261, reason: x}", "GF261 (unused-suppression) is a warning the fleet cannot"),
        ("{code: GF211, team: nobody, reason: x}", "names unknown team 'nobody'"),
    ],
)
def test_a_suppression_that_cannot_apply_is_an_error_at_it(
    write_policies: PolicyWriter, entry: str, why: str
) -> None:
    with pytest.raises(CompileError) as raised:
        check_policies(policies(write_policies, f"    - {entry}\n"))
    (error,) = [d for d in raised.value.diagnostics if d.code == "GF260"]
    assert why in error.message and error.hints
    assert error.span is not None and error.span.file.endswith("fleet.yaml")
    assert error.span.line == 7 and error.span.column > 7  # at the code or the team


def test_a_suppression_of_an_unknown_cluster_is_gf204(write_policies: PolicyWriter) -> None:
    with pytest.raises(CompileError) as raised:
        check_policies(policies(write_policies, "    - {code: GF217, cluster: c9, reason: x}\n"))
    assert [d.code for d in raised.value.diagnostics if d.severity.value == "error"] == ["GF204"]


@pytest.mark.parametrize(
    ("entry", "code"),
    [("{code: GF211}", "GF108"), ("{code: GF211, reason: '  '}", "GF107")],
)
def test_a_suppression_needs_a_reason(
    write_policies: PolicyWriter, run_cli: Run, entry: str, code: str
) -> None:
    root = policies(write_policies, f"    - {entry}\n")
    status, _, err = run_cli("check", "--policies", root)
    assert status == 2 and f"[{code}]" in err and "fleet.yaml:7:" in err


def test_the_report_lists_each_suppression_with_what_it_silenced(
    write_policies: PolicyWriter,
) -> None:
    root = policies(
        write_policies,
        "    - {code: GF211, reason: kept for the next purchase}\n"
        "    - {code: GF217, cluster: c1, reason: RMA ticket 4711 is open}\n",
    )
    report = compile_policies(root).tree["report.md"]
    section = report[report.index("## Suppressed warnings") :]
    assert section.splitlines() == [
        "## Suppressed warnings",
        "",
        "- `GF211` unused-tier, fleet-wide (policies/fleet.yaml): 1 warning silenced. "
        "Reason: kept for the next purchase",
        "  - tier 'spare' is not used by any team's quota",
        "- `GF217` untolerated-taint, cluster c1 (policies/fleet.yaml): 1 warning silenced. "
        "Reason: RMA ticket 4711 is open",
        "  - device taint 'broken' (example.com/ecc) is tolerated by no team: its devices "
        "serve nobody",
    ]
    assert "GF211" not in report[report.index("## Warnings") : report.index("## Suppressed")]


def test_the_report_has_no_suppression_section_without_suppressions(
    write_policies: PolicyWriter,
) -> None:
    assert (
        "Suppressed" not in compile_policies(policies(write_policies, "    []\n")).tree["report.md"]
    )
