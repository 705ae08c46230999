"""Who reviews which policy file, from the policy itself, and the CODEOWNERS file that says so.

The platform's code owners (Fleet `spec.owners`) review every policy file but the teams'
own files: the fleet, clusters, GPU models, tiers, taints and every grant, and CODEOWNERS
itself (else a team could route its grant to itself). Each team's own file goes to the
owners its grant names (to the platform when it names none). `gpufleet codeowners` writes
that as a managed block of CODEOWNERS; `gpufleet check` fails (GF229) when the file,
read with CODEOWNERS' own rules (last matching pattern wins), routes any policy file to
other reviewers: a block edited by hand, a later line that overrides it, or a file gone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from compiler import codeowners
from compiler.diagnostics import Diagnostic, Span, fail
from compiler.ir import ResolvedFleet
from compiler.load.loader import display_path
from compiler.model.fleet import Fleet
from compiler.policy_files import PolicyEntry, scan_policy_files
from compiler.repository import repository_root


@dataclass(frozen=True)
class Ownership:
    """The CODEOWNERS file of a fleet and what it must say."""

    file: Path
    block: list[tuple[str, Sequence[str]]]
    """The managed block's lines: CODEOWNERS itself and the policy directory (the platform's),
    then each team's file."""
    expected: dict[str, tuple[str, ...]]
    """Every policy file, relative to the repository root -> its owners."""


def ownership(
    fleet: ResolvedFleet, policies: Path, files: Sequence[PolicyEntry] | None = None
) -> Ownership | None:
    """What CODEOWNERS must say for this fleet (None when the Fleet declares no owners), whose
    policy files are `files` (the files the compile loaded; by default, those there now)."""
    spec = fleet.fleet.spec if fleet.fleet is not None else None
    if spec is None or not spec.owners:
        return None
    root = repository_root(policies)
    directory = policies.resolve().relative_to(root).as_posix()
    prefix = "" if directory == "." else f"{directory}/"
    platform = tuple(spec.owners)
    team_files = {
        f"{prefix}{team.file.source.relative_path}": tuple(team.spec.owners) or platform
        for team in fleet.teams
        if team.file is not None
    }
    listed = scan_policy_files(policies)[0] if files is None else files
    expected = {f"{prefix}{entry.relative}": platform for entry in listed} | team_files
    expected[spec.codeowners] = platform
    block: list[tuple[str, Sequence[str]]] = [(f"/{spec.codeowners}", platform)]
    block.append((f"/{prefix}", platform))
    block += [(f"/{path}", owners) for path, owners in sorted(team_files.items())]
    return Ownership(root / spec.codeowners, block, dict(sorted(expected.items())))


def codeowners_text(owned: Ownership, fleet: Fleet) -> str:
    """The CODEOWNERS file with gpufleet's block written in (other lines kept as they are);
    GF229 when the file cannot be read or holds a broken gpufleet block."""
    existing = _read(owned, fleet) if owned.file.exists() else None
    try:
        return codeowners.with_block(existing, codeowners.managed_block(owned.block))
    except ValueError as error:  # two blocks, an unclosed one, a name CODEOWNERS cannot hold
        raise fail(
            "GF229",
            f"cannot write gpufleet's block into {display_path(owned.file)}: {error}",
            Span(display_path(owned.file)),
            "leave one `# BEGIN gpufleet` ... `# END gpufleet` block (or none), and give "
            "policy files names without spaces or brackets",
        ) from None


def ownership_problems(owned: Ownership, fleet: Fleet) -> list[Diagnostic]:
    """GF229 for every policy file CODEOWNERS routes to other reviewers than its owners."""
    shown = display_path(owned.file)
    where = fleet.source.span(("spec", "owners"))
    hint = "run `gpufleet codeowners` and commit the file"
    if not owned.file.exists():
        return [
            Diagnostic(
                "GF229",
                f"the fleet declares code owners, but there is no CODEOWNERS file at {shown}",
                where,
                (hint,),
            )
        ]
    text = _read(owned, fleet)
    after_block = _line_after_block(text)
    found = codeowners.disagreements(text, owned.expected)
    return [
        Diagnostic(
            "GF229",
            f"{shown} routes {disagreement.path} to "
            f"{' '.join(disagreement.actual) or 'nobody'}, not to "
            f"{' '.join(disagreement.expected)}",
            Span(shown, rule.line, 1) if (rule := disagreement.rule) is not None else Span(shown),
            (
                "this line comes after gpufleet's block and overrides it (the last matching "
                "line wins): remove or narrow it",
            )
            if rule is not None and rule.line > after_block
            else (hint,),
            (("the owners are declared here", where),),
        )
        for disagreement in found
    ]


def _read(owned: Ownership, fleet: Fleet) -> str:
    """The CODEOWNERS text; GF229 when it is not a readable UTF-8 file."""
    shown = display_path(owned.file)
    try:
        return owned.file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else "it is not UTF-8"
        raise fail(
            "GF229",
            f"cannot read {shown}: {reason}",
            fleet.source.span(("spec", "codeowners")),
            "Fleet spec.codeowners names the CODEOWNERS file, relative to the repository root",
        ) from None


def _line_after_block(text: str) -> int:
    """The line of gpufleet's END marker (0 without a block): rules below it are the user's
    and override the block."""
    lines = text.splitlines()
    return next((i for i, line in enumerate(lines, 1) if line.strip() == codeowners.END), 0)
