"""The one way a stage raises diagnostics: gather them in `Problems`, raise them once.

A stage checks all it can before it stops, so that a user fixes every problem of a run at once:
whatever finds problems yields them (a registered check) or appends them to the stage's
collector, and the stage ends with `problems.raise_if_errors()`. Where nothing can go on after
the first problem (a file that does not parse, an out/ that is a symlink), `raise fail(...)` is
the same collector holding one diagnostic. CompileError is built here only (a test holds every
other module to that), so every raise goes through these two.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from compiler.diagnostics.codes import Severity
from compiler.diagnostics.diagnostic import CompileError, Diagnostic, Span


class Problems:
    """The diagnostics a stage has found so far, errors and warnings, in the order found."""

    def __init__(self, found: Iterable[Diagnostic] = ()) -> None:
        self._found = list(found)

    def append(self, diagnostic: Diagnostic) -> None:
        """Record one finding."""
        self._found.append(diagnostic)

    def extend(self, diagnostics: Iterable[Diagnostic]) -> None:
        """Record every finding of `diagnostics` (a check's generator, another collector)."""
        self._found.extend(diagnostics)

    def __iter__(self) -> Iterator[Diagnostic]:
        return iter(self._found)

    def __len__(self) -> int:
        return len(self._found)

    @property
    def errors(self) -> list[Diagnostic]:
        """The findings that stop the compile."""
        return [d for d in self._found if d.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[Diagnostic]:
        """The findings that do not."""
        return [d for d in self._found if d.severity is Severity.WARNING]

    def error(self) -> CompileError:
        """The CompileError carrying every finding, for a stage that cannot go on."""
        return CompileError(self._found)

    def raise_if_errors(self) -> None:
        """Raise every finding (warnings too, to be printed with them) if any is an error."""
        if self.errors:
            raise self.error()


def fail(
    code: str,
    message: str,
    span: Span | None = None,
    *hints: str,
    related: tuple[tuple[str, Span], ...] = (),
) -> CompileError:
    """A CompileError carrying one diagnostic, for a stage that cannot go on after it:
    `raise fail(...)` reads as the sentence it is."""
    return Problems([Diagnostic(code, message, span, hints, related)]).error()
