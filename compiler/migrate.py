"""`gpufleet migrate`: move what a team's own file grants itself into a platform grant.

Before grants, a team's file said everything: namespaces, clusters, each tier's guarantee
and limit, priorities, tolerations, admin access and cohort (and the Fleet listed each
team's group under `spec.teams`). For every team that has no TeamGrant yet, this writes
`grants/<team>.yaml` with exactly those entitlements and leaves in the team's file only how
the team uses them (gang sizes, which namespace holds a split tier, the default priority,
memory QoS), so the fleet compiles to the same objects. Comments and layout of the edited
files are kept (ruamel.yaml round trip); a team that already has a grant is left alone, so a
second run changes nothing.
"""

from __future__ import annotations

import io
import posixpath
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from compiler.diagnostics import Span, fail
from compiler.load import load_policies
from compiler.load.document import KEY, SourceDocument
from compiler.model.base import API_VERSION
from compiler.model.build import build_object
from compiler.model.grant import GRANTS_DIRECTORY
from compiler.model.team import Team
from compiler.write.atomic import replace_file
from compiler.write.policy_yaml import policy_yaml

SCHEMA_COMMENT = "# yaml-language-server: $schema="
_ANCHORED = re.compile(r"(^|[\s\[{,:-])[&*][A-Za-z0-9_][^\s,\]}]*|<<\s*:", re.MULTILINE)
"""A YAML anchor (`&name`), alias (`*name`) or merge key (`<<:`)."""
MOVED = ("namespaces", "clusters", "priorities", "tolerations", "adminAccess", "cohort")
"""Team file fields that only narrow a grant: moved into the grant whole."""


@dataclass(frozen=True)
class Migration:
    """What a migration wrote: new grant files and edited files (paths below the root)."""

    grants: tuple[str, ...]
    edited: tuple[str, ...]
    files: dict[str, str]
    """Every file to write, path below the policy directory -> its new text."""


def plan_migration(root: Path) -> Migration:
    """The files a migration of `root` writes, computed without writing anything; raises
    CompileError if a policy file cannot be read or a team file cannot be migrated."""
    documents = load_policies(root)
    grants_of = {_name(d): d for d in _of_kind(documents, "TeamGrant")}
    pending = _pending_teams(documents, set(grants_of))
    fleet = next(iter(_of_kind(documents, "Fleet")), None)
    groups = _fleet_groups(fleet)
    if not pending and not groups:
        return Migration((), (), {})

    editor = _Editor(root)
    files: dict[str, str] = {}
    for team in pending:
        relative = f"{GRANTS_DIRECTORY}/{team.name}.yaml"
        if (root / relative).exists():
            raise fail(
                "GF502",
                f"cannot write the grant of team {team.name!r}: {relative} exists",
                Span(str(root / relative)),
                "move that file away, or write the team's grant into it by hand",
            )
        files[relative] = _grant_text(team, groups.pop(team.name, None), editor.schema_line(team))
        editor.strip_team(team)
    for name, group in groups.items():  # teams that had grants before: the group goes there
        if name not in grants_of:
            assert fleet is not None
            raise fail(
                "GF219",
                f"the Fleet names a group for team {name!r}, which has no grant and no file",
                fleet.span(("spec", "teams", name, KEY)),
                "remove the line (it grants nothing), or grant the team first",
            )
        editor.give_group(grants_of[name], group)
    if fleet is not None:
        editor.drop_fleet_groups(fleet)
    grants = sorted(files)
    files.update(editor.texts())
    edited = sorted(path for path in files if path not in grants)
    return Migration(tuple(grants), tuple(edited), dict(sorted(files.items())))


def migrate(root: Path) -> Migration:
    """Plan the migration of `root` and write it (each file atomically)."""
    migration = plan_migration(root)
    for relative, text in migration.files.items():
        replace_file(root / relative, text, "migrating")
    return migration


def _of_kind(documents: list[SourceDocument], kind: str) -> list[SourceDocument]:
    return [d for d in documents if isinstance(d.data, dict) and d.data.get("kind") == kind]


def _name(document: SourceDocument) -> object:
    metadata = document.data.get("metadata")
    return metadata.get("name") if isinstance(metadata, dict) else None


def _pending_teams(documents: list[SourceDocument], granted: set[object]) -> list[Team]:
    """The teams with no grant yet, each validated (a team written twice is GF112)."""
    pending: dict[str, Team] = {}
    for document in _of_kind(documents, "Team"):
        if _name(document) in granted:
            continue
        team = _team(document)
        first = pending.setdefault(team.name, team)
        if first is not team:
            raise fail(
                "GF112",
                f"team {team.name!r} is defined twice: migrate cannot tell which to grant",
                document.span(("metadata", "name")),
                f"merge the two; the first is in {first.source.file}",
            )
    return list(pending.values())


def _team(document: SourceDocument) -> Team:
    built = build_object(document)
    assert isinstance(built, Team)
    if built.spec.namespaces is None:
        raise fail(
            "GF219",
            f"team {built.name!r} has no grant, and its file names no namespaces to grant it",
            document.span(("spec",)),
            f"write its grant by hand: {GRANTS_DIRECTORY}/{built.name}.yaml",
        )
    return built


def _fleet_groups(fleet: SourceDocument | None) -> dict[str, str]:
    """The team groups the Fleet declared before grants (`spec.teams: {team: {group}}`)."""
    spec = fleet.data.get("spec") if fleet is not None and isinstance(fleet.data, dict) else None
    if fleet is None or not isinstance(spec, dict) or "teams" not in spec:
        return {}
    teams = spec["teams"]
    if not isinstance(teams, dict) or not all(
        isinstance(identity, dict) and isinstance(identity.get("group"), str)
        for identity in teams.values()
    ):
        raise fail(
            "GF107",
            "`spec.teams` must map each team to `{group: <its group>}`",
            fleet.span(("spec", "teams")),
            "fix it by hand, then migrate: each group moves to its team's grant",
        )
    return {str(name): identity["group"] for name, identity in teams.items()}


def _grant_text(team: Team, group: str | None, schema_line: str | None) -> str:
    """The TeamGrant of a team file written before grants: everything it granted itself."""
    spec = team.spec
    grant: dict[str, Any] = {}
    if group is not None:
        grant["group"] = group
    grant["namespaces"] = list(spec.namespaces or ())
    if spec.clusters is not None:
        grant["clusters"] = list(spec.clusters)
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for index, use in enumerate(spec.quotas):
        if use.guaranteed is None:  # required before grants: nothing to move
            raise fail(
                "GF108",
                f"team {team.name!r}: missing required field `guaranteed` in its "
                f"{use.tier!r} quota",
                team.source.span(("spec", "quotas", index)),
                "say how many devices the team is guaranteed, then migrate",
            )
        guaranteed = use.guaranteed
        totals[use.tier][0] += guaranteed
        totals[use.tier][1] += guaranteed if use.limit is None else use.limit
    if totals:
        grant["quotas"] = [
            {"tier": tier, "guaranteed": g} | ({"limit": limit} if limit != g else {})
            for tier, (g, limit) in totals.items()
        ]
    if spec.priorities:
        grant["priorities"] = list(spec.priorities)
    if spec.tolerations:
        grant["tolerations"] = [
            t.model_dump(by_alias=True, exclude_none=True, exclude_defaults=False)
            for t in spec.tolerations
        ]
    if spec.admin_access:
        grant["adminAccess"] = True
    if spec.cohort is not None:
        grant["cohort"] = spec.cohort
    document = {
        "apiVersion": API_VERSION,
        "kind": "TeamGrant",
        "metadata": {"name": team.name},
        "spec": grant,
    }
    header = (
        f"# What the platform grants team {team.name} (moved out of its own file by "
        "`gpufleet migrate`).\n"
        "# The platform owns this file; the team's file only shapes how the team uses it.\n"
    )
    return (schema_line or "") + header + _dump(document)


def _dump(data: Any) -> str:
    yaml = policy_yaml()
    yaml.default_flow_style = None
    stream = io.StringIO()
    yaml.dump(_flow_leaves(data), stream)
    return stream.getvalue()


def _flow_leaves(data: Any) -> Any:
    """Lists of scalars and mappings of scalars in flow style (`[a, b]`, `{key: x}`), the way
    the example policies are written; everything else in block style."""
    if isinstance(data, dict):
        node = CommentedMap((k, _flow_leaves(v)) for k, v in data.items())
        if all(not isinstance(v, (dict, list)) for v in data.values()) and len(data) <= 4:
            node.fa.set_flow_style()
        return node
    if isinstance(data, list):
        seq = CommentedSeq(_flow_leaves(v) for v in data)
        if all(not isinstance(v, (dict, list)) for v in data):
            seq.fa.set_flow_style()
        return seq
    return data


class _Editor:
    """The policy files a migration edits, loaded once each with ruamel.yaml's round trip."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.text: dict[str, str] = {}
        self.loaded: dict[str, list[Any]] = {}
        self.changed: set[str] = set()

    def _documents(self, document: SourceDocument) -> list[Any]:
        """The round-trip documents of `document`'s file; refused (GF103) when the file uses
        anchors or merge keys, which an edit of one node would silently change elsewhere."""
        relative = document.relative_path
        if relative not in self.loaded:
            text = self.text[relative] = (self.root / relative).read_text(encoding="utf-8")
            if _ANCHORED.search(text):
                raise fail(
                    "GF103",
                    f"{document.file} uses YAML anchors or merge keys: migrate cannot move "
                    "fields out of it without changing what the aliases repeat",
                    document.span(),
                    "expand the anchors by hand (write each value out), then migrate",
                )
            self.loaded[relative] = list(policy_yaml().load_all(text))
        return self.loaded[relative]

    def schema_line(self, team: Team) -> str | None:
        """The team file's `yaml-language-server` schema comment, re-pointed from the grant's
        directory (None if it has none)."""
        self._documents(team.source)
        relative = team.source.relative_path
        first = self.text[relative].split("\n", 1)[0]
        if not first.startswith(SCHEMA_COMMENT):
            return None
        target = first.removeprefix(SCHEMA_COMMENT).strip()
        if "://" not in target and not target.startswith("/"):
            absolute = posixpath.normpath(posixpath.join(posixpath.dirname(relative), target))
            target = posixpath.relpath(absolute, GRANTS_DIRECTORY)
        return f"{SCHEMA_COMMENT}{target}\n"

    def strip_team(self, team: Team) -> None:
        """Remove from the team's document what its grant now holds."""
        relative = team.source.relative_path
        document = self._documents(team.source)[team.source.index]
        spec = document.get("spec")
        if not isinstance(spec, dict):
            return
        namespaces = team.spec.namespaces or []
        only_namespace = namespaces[0] if len(namespaces) == 1 else None
        for key in MOVED:
            spec.pop(key, None)
        quotas = spec.get("quotas")
        if isinstance(quotas, list):
            per_tier: dict[str, int] = defaultdict(int)
            for use in team.spec.quotas:
                per_tier[use.tier] += 1
            kept = CommentedSeq()
            for use, node in zip(team.spec.quotas, quotas, strict=True):
                if per_tier[use.tier] == 1:
                    node.pop("guaranteed", None)
                    node.pop("limit", None)
                if only_namespace is not None and node.get("namespace") == only_namespace:
                    node.pop("namespace", None)
                if node.get("gang", 1) == 1:
                    node.pop("gang", None)
                if set(node) != {"tier"}:
                    kept.append(node)
            if kept:
                spec["quotas"] = kept
            else:
                del spec["quotas"]
        if not spec:
            del document["spec"]
        self.changed.add(relative)

    def give_group(self, grant: SourceDocument, group: str) -> None:
        """Write the group the Fleet named for a team into the team's existing grant (GF107
        when the grant names another)."""
        spec = self._documents(grant)[grant.index].get("spec")
        if not isinstance(spec, CommentedMap):
            return  # not a valid grant: the compile reports it
        if spec.get("group", group) != group:
            raise fail(
                "GF107",
                f"the grant of team {_name(grant)!r} names group {spec['group']!r}, the Fleet's "
                f"spec.teams names {group!r}",
                grant.span(("spec", "group")),
                "keep one: the grant's is the one that counts; remove the Fleet's line",
            )
        if "group" not in spec:
            spec.insert(0, "group", group)
            self.changed.add(grant.relative_path)

    def drop_fleet_groups(self, fleet: SourceDocument) -> None:
        """Remove the Fleet's `spec.teams` (the groups now live in the grants)."""
        spec = self._documents(fleet)[fleet.index].get("spec")
        if isinstance(spec, dict) and "teams" in spec:
            del spec["teams"]
            self.changed.add(fleet.relative_path)

    def texts(self) -> dict[str, str]:
        """The new text of every edited file."""
        found = {}
        for relative in sorted(self.changed):
            stream = io.StringIO()
            policy_yaml().dump_all(self.loaded[relative], stream)
            found[relative] = stream.getvalue()
        return found
