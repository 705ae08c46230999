"""`gpufleet diff`: what a compile would change in out/, grouped by cluster and object."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from compiler.report.mig import MigChange

FLEET_GROUP = "fleet"


@dataclass(frozen=True)
class FileChange:
    """One file of out/ that a compile would add, change or remove."""

    path: str
    status: str
    """`added`, `changed`, `removed` or `renamed` (moved from `moved_from`, maybe changed)."""
    old: str
    new: str
    moved_from: str = ""
    """The path a `renamed` file had before."""


def group_of(path: str) -> str:
    """The group a file of out/ belongs to: its cluster, `argocd`, or `fleet`."""
    parts = path.split("/")
    if parts[0] == "clusters" and len(parts) > 2:
        return parts[1]
    if parts[0] == "plan" and len(parts) == 2 and parts[1].endswith(".json"):
        return parts[1].removesuffix(".json")
    if parts[0] == "argocd":
        return "argocd"
    return FLEET_GROUP


def object_label(path: str, text: str) -> str:
    """What a file holds, as a reviewer names it: `ResourceQuota ml-research/gpufleet-devices`."""
    if path.startswith("plan/"):
        return f"plan {group_of(path)}"
    if path == "report.md":
        return "report"
    if path == ".gpufleet-owned":
        return "ownership list"
    if path.endswith((".yaml", ".yml")):
        try:
            document = yaml.safe_load(text)
        except yaml.YAMLError:
            document = None
        if isinstance(document, dict) and isinstance(document.get("kind"), str):
            metadata = document.get("metadata")
            if document["kind"] == "Kustomization" or not isinstance(metadata, dict):
                return f"{document['kind']} {group_of(path)}"
            name = metadata.get("name", "?")
            namespace = metadata.get("namespace")
            return (
                f"{document['kind']} {namespace}/{name}"
                if namespace
                else f"{document['kind']} {name}"
            )
    return path


def _order(group: str) -> tuple[int, str]:
    return ({"argocd": 1, FLEET_GROUP: 2}.get(group, 0), group)


def summary_line(group: str, changes: Sequence[FileChange], mig: Sequence[MigChange]) -> str:
    """`prod-east: 2 changed, 1 added; 3 nodes change MIG configuration (h100: 3)`."""
    counts = [
        f"{n} {status}"
        for status in ("changed", "added", "removed", "renamed")
        if (n := sum(1 for c in changes if c.status == status))
    ]
    line = f"{group}: {', '.join(counts) or 'no change'}"
    if mig:
        nodes = sum(m.nodes for m in mig)
        pools = ", ".join(f"{m.pool}: {m.nodes}" for m in mig)
        node_s = "node changes" if nodes == 1 else "nodes change"
        line += f"; {nodes} {node_s} MIG configuration ({pools})"
    return line


def _unified(change: FileChange) -> list[str]:
    old = change.old.splitlines(keepends=True)
    new = change.new.splitlines(keepends=True)
    source = change.moved_from or change.path
    before = "/dev/null" if change.status == "added" else f"a/{source}"
    after = "/dev/null" if change.status == "removed" else f"b/{change.path}"
    lines = list(difflib.unified_diff(old, new, before, after, n=3))
    if change.status == "renamed":
        # git's extended header: `git apply` moves the file, then applies the hunks (if any)
        lines[:0] = [
            f"diff --git a/{source} b/{change.path}\n",
            f"rename from {source}\n",
            f"rename to {change.path}\n",
        ]
    return [
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    ]


def render_diff(
    changes: Sequence[FileChange],
    mig: Mapping[str, Sequence[MigChange]],
    foreign: Sequence[str] = (),
) -> str:
    """A one-line summary per group, then each object's unified diff under its group.

    Summary and headings start with `#`, so the text stays a patch `git apply` accepts.
    """
    groups: dict[str, list[FileChange]] = {}
    for change in sorted(changes, key=lambda c: c.path):
        groups.setdefault(group_of(change.path), []).append(change)
    for cluster in mig:
        if mig[cluster]:
            groups.setdefault(cluster, [])
    ordered = sorted(groups, key=_order)
    out = [f"# {summary_line(g, groups[g], mig.get(g, ()))}\n" for g in ordered]
    out += [f"# not gpufleet's, left as it is: {path}\n" for path in foreign]
    for group in ordered:
        for change in groups[group]:
            label = object_label(change.path, change.new or change.old)
            moved = f" (from {change.moved_from})" if change.moved_from else ""
            out.append(f"\n# {group}: {change.status} {label}{moved}\n")
            out.extend(_unified(change))
    return "".join(out)


def read_changes(
    out: Path,
    tree: Mapping[str, str],
    added: Sequence[str],
    changed: Sequence[str],
    removed: Sequence[str],
) -> list[FileChange]:
    """The FileChanges for the paths a staleness check found, reading the old texts from out/."""

    def old(path: str) -> str:
        return (out / path).read_bytes().decode("utf-8", errors="replace")

    return [
        *(FileChange(p, "added", "", tree[p]) for p in added),
        *(FileChange(p, "changed", old(p), tree[p]) for p in changed),
        *(FileChange(p, "removed", old(p), "") for p in removed),
    ]
