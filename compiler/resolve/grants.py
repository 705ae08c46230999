"""Each team as its grant and its own file make it: what the rest of the compiler sees.

The platform's grant (`TeamGrant`) says what a team may have; the team's own file (`Team`)
says how it uses that, and may narrow it. Anything the file asks beyond the grant is GF218,
pointing at the request and at the grant it exceeds. A field the file leaves out takes the
grant's value, and every diagnostic about the team points where the value was written
(`ComposedDocument`).
"""

from __future__ import annotations

import operator
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TypeVar

from compiler.diagnostics import Diagnostic, Problems, Span
from compiler.ir import GrantedTeam, GrantedTeamSpec, Quota
from compiler.load.document import ComposedDocument, Path, SourceDocument
from compiler.model.fleet import Fleet, FleetSpec
from compiler.model.grant import (
    GRANTS_DIRECTORY,
    PodSecurityLevel,
    QuotaOverride,
    TeamGrant,
    TierGrant,
)
from compiler.model.team import QuotaUse, Team, TeamSpec, Toleration

T = TypeVar("T")
DEFAULT_POD_SECURITY: PodSecurityLevel = FleetSpec.model_fields["pod_security"].default


@dataclass(frozen=True)
class ClusterGrant:
    """A grant's quotas in one cluster, its overrides applied (tiers in the grant's order)."""

    cluster: str
    tiers: tuple[TierGrant, ...]
    overrides: tuple[int | None, ...]
    """Per tier, the index of the override in `quotaOverrides` (None: not overridden)."""


def granted_teams(
    grants: Sequence[TeamGrant],
    files: Sequence[Team],
    fleet: Fleet | None,
    problems: Problems,
) -> tuple[GrantedTeam, ...]:
    """Every granted team, sorted by name; a team file without a grant is GF219 and one
    that asks beyond its grant GF218 (the team is still returned, so later checks can go
    on and report what else is wrong)."""
    by_name = {grant.name: grant for grant in grants}
    for file in files:
        if file.name not in by_name:
            problems.append(
                Diagnostic(
                    "GF219",
                    f"team {file.name!r} has no grant: only the platform gives a team "
                    "namespaces, tiers and priorities",
                    file.source.span(("metadata", "name")),
                    (
                        f"add a TeamGrant named {file.name!r} ({GRANTS_DIRECTORY}/"
                        f"{file.name}.yaml); `gpufleet migrate` writes it from this file",
                    ),
                )
            )
    own = {file.name: file for file in files}
    level = fleet.spec.pod_security if fleet is not None else DEFAULT_POD_SECURITY
    return tuple(
        _Merge(grant, own.get(grant.name), level, problems).team()
        for grant in sorted(grants, key=lambda g: g.name)
    )


class _Merge:
    """One grant and one team file (or none) merged, with every excess reported."""

    def __init__(
        self,
        grant: TeamGrant,
        file: Team | None,
        pod_security: PodSecurityLevel,
        problems: Problems,
    ) -> None:
        self.grant, self.file, self.problems = grant, file, problems
        self.default_pod_security = pod_security
        self.parts: dict[Path, tuple[SourceDocument, Path]] = {}
        self.asked = file.spec if file is not None else TeamSpec()
        """What the team file asks (nothing, without a file: every field takes the grant's)."""

    def team(self) -> GrantedTeam:
        """The team the grant and the file make (problems found on the way reported)."""
        grant = self.grant.spec
        self._check_grant()
        spec = GrantedTeamSpec(
            namespaces=self._subset("namespaces", grant.namespaces),
            clusters=(
                self._subset("clusters", grant.clusters)
                if grant.clusters is not None
                else self._file_list("clusters")
            ),
            quotas=self._quotas(),
            priorities=self._subset("priorities", grant.priorities),
            default_priority=self.asked.default_priority,
            memory_qos=self.asked.memory_qos,
            tolerations=self._subset(
                "tolerations", grant.tolerations, Toleration.covers, _toleration_in_words
            ),
            admin_access=self._admin_access(),
            cohort=self._cohort(),
            pod_security=grant.pod_security or self.default_pod_security,
            allow=grant.allow,
            group=grant.group,
            owners=tuple(grant.owners),
            shared_claims=tuple(self.asked.shared_claims),
            cluster_quotas=tuple((c.cluster, self._quotas(c)) for c in self._cluster_grants()),
        )
        base = self.file.source if self.file is not None else self.grant.source
        self.parts.setdefault(("spec", "cohort"), (self.grant.source, ("spec", "cohort")))
        if self.file is None:
            self.parts[()] = (self.grant.source, ())
        source = ComposedDocument(
            base.file, base.origin, base.index, base.data, base.positions, self.parts
        )
        return GrantedTeam(self.grant.name, spec, source, self.grant, self.file)

    # -- the grant itself ------------------------------------------------------------------

    def _check_grant(self) -> None:
        seen: dict[str, int] = {}
        for index, tier in enumerate(self.grant.spec.quotas):
            path = ("spec", "quotas", index)
            if tier.effective_limit < tier.guaranteed:
                self.problems.append(
                    Diagnostic(
                        "GF206",
                        f"the grant of team {self.grant.name!r}, tier {tier.tier!r}: limit "
                        f"{tier.limit} is below the guarantee {tier.guaranteed}",
                        self.grant.source.span((*path, "limit")),
                        (
                            "the limit is what the team may use when borrowing: at least the "
                            "guarantee",
                        ),
                    )
                )
            if seen.setdefault(tier.tier, index) != index:
                self.problems.append(
                    Diagnostic(
                        "GF212",
                        f"the grant of team {self.grant.name!r} lists tier {tier.tier!r} twice",
                        self.grant.source.span(path),
                        ("merge the two",),
                        (
                            (
                                "first listed here",
                                self.grant.source.span(("spec", "quotas", seen[tier.tier])),
                            ),
                        ),
                    )
                )

    def _cluster_grants(self) -> list[ClusterGrant]:
        """The grant in each cluster its overrides name (overrides with a problem, reported
        here, are left out: GF252 for a tier not granted, GF212 for one given twice, GF206
        for a limit below the guarantee)."""
        grant = self.grant.spec
        granted = {tier.tier: index for index, tier in enumerate(grant.quotas)}
        chosen: dict[str, dict[int, int]] = {}
        for index, override in enumerate(grant.quota_overrides):
            tier_index = granted.get(override.tier)
            if self._override_problem(index, override, tier_index):
                continue
            assert tier_index is not None
            tiers = chosen.setdefault(override.cluster, {})
            first = tiers.setdefault(tier_index, index)
            if first != index:
                self.problems.append(
                    Diagnostic(
                        "GF212",
                        f"the grant of team {self.grant.name!r} overrides tier "
                        f"{override.tier!r} in cluster {override.cluster!r} twice",
                        self.grant.source.span(("spec", "quotaOverrides", index)),
                        ("merge the two",),
                        (
                            (
                                "first overridden here",
                                self.grant.source.span(("spec", "quotaOverrides", first)),
                            ),
                        ),
                    )
                )
        return [
            ClusterGrant(
                cluster,
                tuple(
                    grant.quota_overrides[at[i]].applied(tier) if i in at else tier
                    for i, tier in enumerate(grant.quotas)
                ),
                tuple(at.get(i) for i in range(len(grant.quotas))),
            )
            for cluster, at in sorted(chosen.items())
        ]

    def _override_problem(
        self, index: int, override: QuotaOverride, tier_index: int | None
    ) -> bool:
        """Report what is wrong with one override on its own; whether anything is."""
        grant = self.grant.spec
        path: Path = ("spec", "quotaOverrides", index)
        if tier_index is None:  # its cluster is checked with the clusters (check_team)
            self.problems.append(
                Diagnostic(
                    "GF252",
                    f"the grant of team {self.grant.name!r} overrides its quota in tier "
                    f"{override.tier!r}, which it does not grant",
                    self.grant.source.span((*path, "tier")),
                    (
                        f"granted tiers: {', '.join(t.tier for t in grant.quotas) or '(none)'}; "
                        "an override only changes a quota the grant gives",
                    ),
                )
            )
            return True
        assert tier_index is not None
        tier = override.applied(grant.quotas[tier_index])
        if tier.effective_limit < tier.guaranteed:
            self.problems.append(
                Diagnostic(
                    "GF206",
                    f"the grant of team {self.grant.name!r}, tier {tier.tier!r} in cluster "
                    f"{override.cluster!r}: limit {tier.effective_limit} is below the "
                    f"guarantee {tier.guaranteed}",
                    self.grant.source.span(
                        (*path, "limit" if override.limit is not None else "guaranteed")
                    ),
                    (
                        "the limit is what the team may use when borrowing: at least the "
                        "guarantee (an override without `limit` keeps the grant's)",
                    ),
                )
            )
            return True
        return False

    # -- narrowing -------------------------------------------------------------------------

    def _exceeds(self, message: str, asked: Path, granted: Path, hint: str) -> None:
        """GF218 at the team file's request, with the grant it exceeds as a note."""
        assert self.file is not None
        self.problems.append(
            Diagnostic(
                "GF218",
                f"team {self.grant.name!r} asks {message}",
                self.file.source.span(asked),
                (hint, "only the platform changes a grant: ask it to, in the grant's file"),
                (("the grant it exceeds", self.grant.source.span(granted)),),
            )
        )

    def _file_list(self, field: str) -> tuple[str, ...] | None:
        """The team file's list for a field the grant leaves open (clusters: None = all)."""
        asked: list[str] | None = getattr(self.asked, field)
        if asked is None:
            return None
        self._point(field, self.file_source)
        return tuple(asked)

    def _subset(
        self,
        field: str,
        granted: Sequence[T],
        covers: Callable[[T, T], bool] = operator.eq,
        shown: Callable[[T], str] = repr,
    ) -> tuple[T, ...]:
        """The team file's list for `field` if the grant covers each item, else the grant's
        (each item beyond it reported)."""
        asked: list[T] | None = getattr(self.asked, field)
        beyond = [
            i for i, item in enumerate(asked or ()) if not any(covers(g, item) for g in granted)
        ]
        key = _camel(field)
        for index in beyond:
            assert asked is not None
            self._exceeds(
                f"for {_singular(key)} {shown(asked[index])}, which its grant does not give it",
                ("spec", key, index),
                self._granted_at(key),
                f"granted: {', '.join(shown(g) for g in granted) or '(none)'}",
            )
        if asked is None or beyond:
            self._point(field, self.grant.source)
            return tuple(granted)
        self._point(field, self.file_source)
        return tuple(asked)

    def _granted_at(self, key: str) -> Path:
        """Where the grant says `key`; its name when it leaves the field out (grants none)."""
        spec = self.grant.source.data.get("spec")
        return ("spec", key) if isinstance(spec, dict) and key in spec else ("metadata", "name")

    def _point(self, field: str, document: SourceDocument) -> None:
        """Diagnostics about `field` point into `document` (the grant or the team file)."""
        key = _camel(field)
        self.parts[("spec", key)] = (document, ("spec", key))

    def _admin_access(self) -> bool:
        granted = self.grant.spec.admin_access
        asked = self.asked.admin_access
        if asked is None:
            self._point("admin_access", self.grant.source)
            return granted
        if asked and not granted:
            self._exceeds(
                "for adminAccess, which its grant does not give it",
                ("spec", "adminAccess"),
                ("metadata", "name"),
                "adminAccess reads every device of a node, allocated or not: remove it",
            )
            return False
        self._point("admin_access", self.file_source)
        return asked

    def _cohort(self) -> str | None:
        granted = self.grant.spec.cohort
        asked = self.asked.cohort
        if asked is not None and asked != granted:
            self._exceeds(
                f"for Kueue cohort {asked!r}; its grant places it in "
                + (f"{granted!r}" if granted else "the cluster's cohort"),
                ("spec", "cohort"),
                ("spec", "cohort") if granted else ("metadata", "name"),
                "a cohort shares unused quota between its members: remove `cohort:`",
            )
        return granted

    # -- quotas ----------------------------------------------------------------------------

    def _quotas(self, cluster: ClusterGrant | None = None) -> tuple[Quota, ...]:
        """Per granted tier, in the grant's order: the team file's uses of it (checked against
        the grant) or, if it names none, the grant whole, in the team's only namespace.

        With `cluster`, the same in that cluster, its overrides applied: only what the
        overrides change is checked again (the rest was reported for `quotas`)."""
        uses: dict[str, list[tuple[int, QuotaUse]]] = defaultdict(list)
        granted = {tier.tier: index for index, tier in enumerate(self.grant.spec.quotas)}
        for index, use in enumerate(self.asked.quotas):
            if use.tier in granted:
                uses[use.tier].append((index, use))
            elif cluster is None:
                self._exceeds(
                    f"for a quota of tier {use.tier!r}, which its grant does not give it",
                    ("spec", "quotas", index, "tier"),
                    self._granted_at("quotas"),
                    "granted tiers: "
                    + (", ".join(t.tier for t in self.grant.spec.quotas) or "(none)"),
                )
        tiers = self.grant.spec.quotas if cluster is None else cluster.tiers
        quotas: list[Quota] = []
        for tier_index, tier in enumerate(tiers):
            grant_path: Path = ("spec", "quotas", tier_index)
            tier_uses = uses.get(tier.tier)
            if not tier_uses:
                if cluster is None:
                    self.parts[("spec", "quotas", len(quotas))] = (self.grant.source, grant_path)
                written = self._override_span(tier_index, cluster)
                quotas.append(
                    Quota(tier.tier, None, tier.guaranteed, tier.usable_limit, 1, written)
                )
                continue
            quotas.extend(self._uses(tier_index, tier, tier_uses, len(quotas), cluster))
        if cluster is not None:
            return tuple(quotas)
        if self.asked.quotas:
            self.parts.setdefault(("spec", "quotas"), (self.file_source, ("spec", "quotas")))
        else:
            self.parts[("spec", "quotas")] = (self.grant.source, ("spec", "quotas"))
        return tuple(quotas)

    def _override_span(self, tier_index: int, cluster: ClusterGrant | None) -> Span | None:
        """Where the guarantee of a tier is written when an override in `cluster` sets it."""
        at = None if cluster is None else cluster.overrides[tier_index]
        if at is None or self.grant.spec.quota_overrides[at].guaranteed is None:
            return None
        return self.grant.source.span(("spec", "quotaOverrides", at, "guaranteed"))

    def _value_at(self, tier_index: int, field: str, cluster: ClusterGrant | None) -> Path:
        """Where the grant says a tier's `guaranteed` or `limit` in `cluster` (None: the
        grant's own quotas): an override's value, else the grant's; no limit: the guarantee."""
        base = self.grant.spec.quotas[tier_index]
        at = None if cluster is None else cluster.overrides[tier_index]
        override = None if at is None else self.grant.spec.quota_overrides[at]
        if field == "limit":
            if at is not None and override is not None and override.limit is not None:
                return ("spec", "quotaOverrides", at, "limit")
            if base.limit is not None:
                return ("spec", "quotas", tier_index, "limit")
        if at is not None and override is not None and override.guaranteed is not None:
            return ("spec", "quotaOverrides", at, "guaranteed")
        return ("spec", "quotas", tier_index, "guaranteed")

    @property
    def file_source(self) -> SourceDocument:
        """The team file's document (only asked for where the file said something)."""
        assert self.file is not None
        return self.file.source

    def _uses(
        self,
        tier_index: int,
        tier: TierGrant,
        uses: list[tuple[int, QuotaUse]],
        first: int,
        cluster: ClusterGrant | None,
    ) -> list[Quota]:
        """One tier's uses: a single use defaults to the whole grant; several split it and
        say each share; together they stay within the grant (in `cluster`, if given)."""
        grant_path: Path = ("spec", "quotas", tier_index)
        split = len(uses) > 1
        quotas: list[Quota] = []
        for offset, (index, use) in enumerate(uses):
            path: Path = ("spec", "quotas", index)
            if cluster is None:
                self.parts[("spec", "quotas", first + offset)] = (self.file_source, path)
            if split and use.guaranteed is None and cluster is None:
                self.problems.append(
                    Diagnostic(
                        "GF228",
                        f"team {self.grant.name!r} splits its grant of tier {tier.tier!r} "
                        "between namespaces without saying this one's share",
                        self.file_source.span(path),
                        (
                            f"give each use of {tier.tier!r} its `guaranteed` (and `limit`); "
                            f"together at most the grant's {tier.guaranteed} and "
                            f"{tier.usable_limit}",
                        ),
                        (("the grant", self.grant.source.span(grant_path)),),
                    )
                )
            guaranteed, written = use.guaranteed, None
            if guaranteed is None:
                guaranteed = 0 if split else tier.guaranteed
                written = None if split else self._override_span(tier_index, cluster)
                if cluster is None:
                    self.parts[("spec", "quotas", first + offset, "guaranteed")] = (
                        self.grant.source,
                        (*grant_path, "guaranteed"),
                    )
            limit = use.limit
            if limit is None:
                limit = guaranteed if split else max(tier.usable_limit, guaranteed)
                if not split and cluster is None:
                    self.parts[("spec", "quotas", first + offset, "limit")] = (
                        self.grant.source,
                        (*grant_path, "limit"),
                    )
            quotas.append(Quota(tier.tier, use.namespace, guaranteed, limit, use.gang, written))
        self._check_totals(tier_index, tier, uses, quotas, cluster)
        return quotas

    def _check_totals(
        self,
        tier_index: int,
        tier: TierGrant,
        uses: list[tuple[int, QuotaUse]],
        quotas: list[Quota],
        cluster: ClusterGrant | None,
    ) -> None:
        """GF218 where a tier's uses together ask more than the grant gives (in a cluster
        with overrides, only for a value an override changes: the rest is reported once)."""
        base = self.grant.spec.quotas[tier_index]
        for field, total, granted, everywhere in (
            ("guaranteed", sum(q.guaranteed for q in quotas), tier.guaranteed, base.guaranteed),
            ("limit", sum(q.limit for q in quotas), tier.usable_limit, base.usable_limit),
        ):
            if total <= granted or (cluster is not None and granted == everywhere):
                continue
            index, asked = _last_explicit(uses, field)
            what = (
                f"for {_devices(total, 'guaranteed ')}"
                if field == "guaranteed"
                else f"to use up to {_devices(total)}"
            )
            where = "" if cluster is None else f" in cluster {cluster.cluster}"
            self._exceeds(
                f"{what} of tier {tier.tier!r}, beyond the {granted} its grant gives it{where}",
                ("spec", "quotas", index, asked),
                self._value_at(tier_index, field, cluster),
                f"ask for at most {granted} in all",
            )


def _last_explicit(uses: list[tuple[int, QuotaUse]], field: str) -> tuple[int, str]:
    """The last use that states `field` (else its guarantee, which the limit defaults to):
    where a total beyond the grant is reported."""
    for candidate in (field, "guaranteed"):
        for index, use in reversed(uses):
            if getattr(use, candidate) is not None:
                return index, candidate
    return uses[-1][0], field


def _devices(count: int, kind: str = "") -> str:
    return f"{count} {kind}device" + ("" if count == 1 else "s")


@cache  # a handful of field names, asked for each team's every field
def _camel(field: str) -> str:
    head, *rest = field.split("_")
    return head + "".join(word.title() for word in rest)


def _singular(key: str) -> str:
    return {"priorities": "priority"}.get(key, key.removesuffix("s"))


def _toleration_in_words(toleration: Toleration) -> str:
    """`key=value:effect`, `*` for any value or effect."""
    return f"{toleration.key}={toleration.value or '*'}:{toleration.effect or '*'}"
