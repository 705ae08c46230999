"""Where a command's diagnostics go, and what they make its exit code.

Text and github lines go to stderr as the diagnostics are found, so a long run shows its
warnings at once; json and sarif are collected and written as one document to stdout when
the command ends, with the exit code in it. Under --strict a warning fails the run.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from compiler.diagnostics.codes import EXIT_OK, EXIT_STRICT, Severity
from compiler.diagnostics.diagnostic import Diagnostic, Suppressed
from compiler.diagnostics.formats import DOCUMENT_FORMATS, LINE_FORMATTERS
from compiler.repository import repository_root


class DiagnosticOutput:
    """The diagnostics of one command run, printed or collected in one format."""

    def __init__(self, fmt: str, stdout: TextIO | None = None, stderr: TextIO | None = None):
        self.format = fmt
        self.strict = False
        self.policies: Path | None = None
        """The policy directory: SARIF locations are relative to its repository's root."""
        self._stdout = stdout or sys.stdout
        self._stderr = stderr or sys.stderr
        self._reported: list[Diagnostic] = []
        self._seen: set[Diagnostic] = set()
        self._suppressed: list[Suppressed] = []

    @property
    def is_document(self) -> bool:
        """Whether the format is a document on stdout (json, sarif)."""
        return self.format in DOCUMENT_FORMATS

    def report(self, diagnostics: Sequence[Diagnostic]) -> None:
        """Print (text, github) or collect (json, sarif) the diagnostics, each once."""
        for diagnostic in diagnostics:
            if diagnostic in self._seen:
                continue
            self._seen.add(diagnostic)
            self._reported.append(diagnostic)
            if not self.is_document:
                self._stderr.write(LINE_FORMATTERS[self.format](diagnostic) + "\n")

    def suppress(self, suppressed: Sequence[Suppressed]) -> None:
        """Record warnings the fleet silenced: not printed, but kept in the documents."""
        self._suppressed.extend(s for s in suppressed if s not in self._suppressed)

    @property
    def warnings(self) -> int:
        """How many warnings were reported (suppressed ones are not)."""
        return sum(d.severity is Severity.WARNING for d in self._reported)

    @property
    def reported(self) -> tuple[Diagnostic, ...]:
        """Every diagnostic reported so far, in order (each once)."""
        return tuple(self._reported)

    @property
    def suppressed(self) -> tuple[Suppressed, ...]:
        """Every warning the fleet silenced so far."""
        return tuple(self._suppressed)

    def strict_stop(self, what: str) -> bool:
        """Whether --strict ends the run here because warnings were reported (saying so, with
        `what` the run leaves as it is)."""
        if not self.strict_failure():
            return False
        sys.stderr.write(f"note: --strict: warnings fail the run; {what}\n")
        return True

    def strict_failure(self) -> bool:
        """Whether --strict fails the run: it is on and a warning was reported."""
        return self.strict and self.warnings > 0

    def _root(self) -> Path:
        """The repository root of the policies (the working directory without policies, or
        when the path cannot be followed)."""
        try:
            return repository_root(self.policies or Path.cwd() / "policies")
        except (OSError, RuntimeError):
            return Path.cwd()

    def finish(self, exit_code: int) -> int:
        """The run's final exit code (a warning under --strict fails a run that would pass),
        after writing the document of a json or sarif run to stdout."""
        if exit_code == EXIT_OK and self.strict_failure():
            exit_code = EXIT_STRICT
            if not self.is_document:
                self._stderr.write(
                    f"error: --strict: {self.warnings} warning"
                    f"{'' if self.warnings == 1 else 's'} fail the run\n"
                )
        # the documents' writers load pydantic and the rule table: only when asked for
        if self.format == "json":
            from compiler.diagnostics.document import diagnostics_document

            self._stdout.write(
                diagnostics_document(self._reported, self._suppressed, self.strict, exit_code)
            )
        elif self.format == "sarif":
            from compiler.diagnostics.sarif import sarif_log

            self._stdout.write(sarif_log(self._reported, self._suppressed, self._root(), exit_code))
        return exit_code
