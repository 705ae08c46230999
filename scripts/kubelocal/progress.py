"""Progress lines on stderr, all prefixed ``kube-local:``."""

from __future__ import annotations

import sys


def say(message: str) -> None:
    """Print one progress line to stderr, flushed at once."""
    print(f"kube-local: {message}", file=sys.stderr, flush=True)


def duration(seconds: float) -> str:
    """``3m15s`` for 195 s, ``4.2s`` under a minute."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s"
