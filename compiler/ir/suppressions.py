"""A suppression of the fleet with the warnings it silenced (resolve.suppressions applies them)."""

from __future__ import annotations

from dataclasses import dataclass

from compiler.diagnostics import Diagnostic, Span, Suppressed
from compiler.ir.policy import Suppression


@dataclass(frozen=True)
class Silenced:
    """One suppression of the fleet, where it is written, and the warnings it silenced."""

    suppression: Suppression
    span: Span
    findings: tuple[Diagnostic, ...]

    @property
    def scope(self) -> str:
        """`fleet-wide`, `cluster prod-east`, `team ml-research` or both: where it applies."""
        parts = [f"cluster {self.suppression.cluster}"] if self.suppression.cluster else []
        parts += [f"team {self.suppression.team}"] if self.suppression.team else []
        return ", ".join(parts) or "fleet-wide"

    def suppressed(self) -> tuple[Suppressed, ...]:
        """What it silenced, each with its reason and place (for the json and sarif
        documents)."""
        return tuple(Suppressed(f, self.suppression.reason, self.span) for f in self.findings)

    def silences(self, diagnostic: Diagnostic) -> bool:
        """Whether this suppression covers the warning: its code, within its scope."""
        wanted = self.suppression
        return (
            diagnostic.code == wanted.code
            and wanted.cluster in (None, diagnostic.cluster)
            and wanted.team in (None, diagnostic.team)
        )
