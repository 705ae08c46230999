"""The repository a policy directory lives in (CODEOWNERS paths and SARIF locations are
relative to its root)."""

from __future__ import annotations

from pathlib import Path


def repository_root(policies: Path) -> Path:
    """The nearest directory above `policies` (or itself) that holds `.git`; the policy
    directory's parent when there is none (an unpacked tree)."""
    start = policies.resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start.parent
