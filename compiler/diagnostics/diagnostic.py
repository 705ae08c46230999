"""The Diagnostic type: a stable code, a severity, a message, a source span and hints."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from compiler.diagnostics.causes import causal_layer
from compiler.diagnostics.codes import CODES, Severity


@dataclass(frozen=True, order=True)
class Span:
    """A region of a source file, 1-based lines and columns (end is inclusive of the last char)."""

    file: str
    line: int = 0
    column: int = 0
    end_line: int = 0
    end_column: int = 0

    def __str__(self) -> str:
        if self.line <= 0:
            return self.file
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Diagnostic:
    """One problem found in the input, pointing at where it is and how to fix it."""

    code: str
    message: str
    span: Span | None = None
    hints: tuple[str, ...] = ()
    related: tuple[tuple[str, Span], ...] = field(default=())
    cluster: str | None = None
    """The cluster the finding is about, if it is about one: a suppression scoped to a
    cluster silences only its findings."""
    team: str | None = None
    """The team the finding is about, if it is about one (for suppressions scoped to it)."""

    def __post_init__(self) -> None:
        if self.code not in CODES:
            raise ValueError(f"unregistered diagnostic code {self.code}")

    @property
    def severity(self) -> Severity:
        """The severity registered for this diagnostic's code."""
        return CODES[self.code].severity

    @property
    def exit_code(self) -> int:
        """The process exit code this diagnostic calls for if it is an error."""
        return CODES[self.code].exit_code

    def sort_key(self) -> tuple[int, str, int, int, str, str]:
        """A total order so diagnostics print the same way on every run: causes before the
        consequences they bring about (compiler.diagnostics.causes), then file and position."""
        span = self.span or Span("")
        return (causal_layer(self.code), span.file, span.line, span.column, self.code, self.message)


@dataclass(frozen=True)
class Suppressed:
    """A warning the fleet silenced, with the suppression's reason and where it is written:
    not printed as text, but kept in the json and sarif documents (SARIF's `suppressions`)."""

    diagnostic: Diagnostic
    reason: str
    span: Span


class CompileError(Exception):
    """Raised by a stage that cannot go on; carries every diagnostic it found, each once (the
    same finding in each of 50 clusters, say a tier's CEL syntax error, is one diagnostic)."""

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics = sorted(dict.fromkeys(diagnostics), key=Diagnostic.sort_key)
        super().__init__("; ".join(d.message for d in self.diagnostics))

    def __reduce__(self) -> tuple[type[CompileError], tuple[list[Diagnostic]]]:
        """Pickle as the diagnostics, so a worker process's error comes back whole (pickle
        would otherwise rebuild it from its message, a str, not diagnostics)."""
        return (CompileError, (self.diagnostics,))


def exit_code_for(diagnostics: Iterable[Diagnostic]) -> int:
    """The documented exit code for a set of diagnostics: the worst error's, or 0."""
    codes = [d.exit_code for d in diagnostics if d.severity is Severity.ERROR]
    return max(codes, default=0)
