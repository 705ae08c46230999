"""The fleet's suppressions applied to the warnings resolve found.

Each suppression silences the warnings of one code in its scope (the whole fleet, a
cluster, a team, or a team in a cluster) and names its reason; the silenced findings are
kept beside the fleet, so the report lists every suppression with what it silenced.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from compiler.diagnostics import CODES, Diagnostic, Problems, Severity
from compiler.diagnostics.codes import UNSUPPRESSIBLE, suppressible
from compiler.ir import Silenced
from compiler.model.policy import Fleet
from compiler.model.suppression import Suppression


def _invalid(suppression: Suppression) -> str | None:
    """Why a suppression's code cannot be silenced, or None when it can."""
    code = CODES.get(suppression.code)
    if code is None:
        return f"{suppression.code} is not a gpufleet diagnostic code"
    if code.severity is Severity.ERROR:
        return f"{code.code} ({code.name}) is an error, and errors cannot be suppressed"
    if code.code in UNSUPPRESSIBLE:
        return f"{code.code} ({code.name}) is a warning the fleet cannot suppress"
    assert suppressible(code.code)
    return None


def valid_suppressions(
    fleet: Fleet | None,
    clusters: Collection[str],
    teams: Collection[str],
    problems: Problems,
) -> list[Silenced]:
    """The fleet's suppressions that can apply, each with no findings yet; a diagnostic in
    `problems` for each that cannot (an error code, an unknown code, cluster or team)."""
    if fleet is None:
        return []
    found: list[Silenced] = []
    for index, suppression in enumerate(fleet.spec.suppressions):
        path = ("spec", "suppressions", index)
        why = _invalid(suppression)
        if why is not None:
            problems.append(
                Diagnostic(
                    "GF260",
                    f"this suppression cannot apply: {why}",
                    fleet.source.span((*path, "code")),
                    (
                        "fix what the error says, or remove the suppression; only warnings can "
                        "be silenced (docs/diagnostics/ lists every code and its severity)",
                    ),
                )
            )
            continue
        if suppression.cluster is not None and suppression.cluster not in clusters:
            problems.append(
                Diagnostic(
                    "GF204",
                    f"suppression of {suppression.code} names unknown cluster "
                    f"{suppression.cluster!r}",
                    fleet.source.span((*path, "cluster")),
                    (f"clusters: {', '.join(sorted(clusters))}",),
                )
            )
            continue
        if suppression.team is not None and suppression.team not in teams:
            problems.append(
                Diagnostic(
                    "GF260",
                    f"suppression of {suppression.code} names unknown team {suppression.team!r}",
                    fleet.source.span((*path, "team")),
                    (f"teams: {', '.join(sorted(teams)) or 'none'}",),
                )
            )
            continue
        found.append(Silenced(suppression, fleet.source.span(path), ()))
    return found


def apply_suppressions(
    suppressions: Sequence[Silenced], warnings: Sequence[Diagnostic], report_unused: bool
) -> tuple[list[Diagnostic], tuple[Silenced, ...]]:
    """The warnings no suppression silences, and each suppression with what it silenced
    (the first that matches a warning takes it). With `report_unused`, a GF261 warning for
    each suppression that silenced nothing (not while errors may have hidden warnings)."""
    taken: dict[int, list[Diagnostic]] = {index: [] for index in range(len(suppressions))}
    kept: list[Diagnostic] = []
    for warning in warnings:
        match = next(
            (i for i, s in enumerate(suppressions) if s.silences(warning)),
            None,
        )
        if match is None or warning.severity is not Severity.WARNING:
            kept.append(warning)
        else:
            taken[match].append(warning)
    silenced = tuple(
        Silenced(s.suppression, s.span, tuple(sorted(taken[i], key=Diagnostic.sort_key)))
        for i, s in enumerate(suppressions)
    )
    if report_unused:
        kept.extend(
            Diagnostic(
                "GF261",
                f"this suppression of {s.suppression.code} ({s.scope}) silenced no warning",
                s.span,
                (
                    "remove it: the warning it was written for is gone (or the scope does "
                    "not match the cluster or team the warning is about)",
                ),
            )
            for s in silenced
            if not s.findings
        )
    return kept, silenced
