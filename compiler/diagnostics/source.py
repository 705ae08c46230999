"""Where a policy object was written, as the stages after load need it: a span per path.

The loaded documents (compiler.load.document) are one way to know it; solve, emit and report
need only the two things every diagnostic and provenance annotation asks of them, so they
see this protocol, not the loader's types.
"""

from __future__ import annotations

from typing import Protocol

from compiler.diagnostics.diagnostic import Span


class SpanSource(Protocol):
    """The document a policy object's values were written in (or composed from)."""

    @property
    def origin(self) -> str:
        """The stable path provenance annotations name: `<policies dir name>/<relative path>`."""

    def span(self, path: tuple[str | int, ...] = ()) -> Span:
        """Where the value at `path` was written (or its nearest ancestor that was)."""
