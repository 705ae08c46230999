"""Progress lines on stderr, all prefixed ``kube-local:``."""

from __future__ import annotations

import sys
import time


def say(message: str) -> None:
    """Print one progress line to stderr, flushed at once."""
    print(f"kube-local: {message}", file=sys.stderr, flush=True)


def duration(seconds: float) -> str:
    """``3m15s`` for 195 s, ``4.2s`` under a minute."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s"


class Laps:
    """How long each phase of a start took: ``lap(name)`` ends the phase running since the
    previous lap (or since construction)."""

    def __init__(self) -> None:
        """Start timing the first phase."""
        self.seconds: dict[str, float] = {}
        self._clock = time.monotonic()

    def lap(self, phase: str) -> None:
        """Record ``phase`` as ended now."""
        now = time.monotonic()
        self.seconds[phase] = round(now - self._clock, 2)
        self._clock = now
