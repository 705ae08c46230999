"""The repository a policy directory lives in (CODEOWNERS paths and SARIF locations are
relative to its root), and where Argo CD's plugin finds its root (`render --source-path`)."""

from __future__ import annotations

import argparse
from pathlib import Path, PurePosixPath

from compiler.diagnostics import fail


def repository_root(policies: Path) -> Path:
    """The nearest directory above `policies` (or itself) that holds `.git`; the policy
    directory's parent when there is none (an unpacked tree)."""
    start = policies.resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start.parent


def out_from_repository_root(args: argparse.Namespace) -> None:
    """With `render --source-path`, make --out relative to the repository's root.

    Argo CD runs a plugin in the Application's source directory, which is the repository's
    root followed by ARGOCD_APP_SOURCE_PATH; out/ is where the fleet's gitops.path says,
    from that root. A working directory that does not end in the source path is GF113:
    guessing the root could read some other out/.
    """
    source = getattr(args, "source_path", None)
    if source is None or args.out.is_absolute():
        return
    here = Path.cwd()
    root = source_root(here, source)
    if root is None:
        raise fail(
            "GF113",
            f"--source-path {source!r} is not the end of the working directory {here}, so "
            "the repository's root (and out/ in it) is unknown",
            None,
            "run the plugin in the Application's source directory, as Argo CD does, with "
            "ARGOCD_APP_SOURCE_PATH set to the Application's `path`",
        )
    args.out = root / args.out


def source_root(here: Path, source: str) -> Path | None:
    """The directory `here` is `source` below (`a/b` below /r for /r/a/b), or None when
    `here` does not end in `source` or `source` leaves the repository (absolute, `..`)."""
    path = PurePosixPath(source)
    parts = tuple(p for p in path.parts if p != ".")
    if path.is_absolute() or ".." in parts:
        return None
    if not parts:
        return here
    if len(parts) >= len(here.parts) or here.parts[-len(parts) :] != parts:
        return None
    return here.parents[len(parts) - 1]
