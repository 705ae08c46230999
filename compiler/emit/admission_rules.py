"""What an admission rule family is made of, and the CEL variables the families share.

The families live in admission_claims (tiers, tolerations, adminAccess, and opt-in no GPU
claims in namespaces no team owns) and admission_workloads (priorities, and no way to GPUs
around DRA: device-plugin resources, GPU runtime classes, the NVIDIA container runtime's
variables, each unless the team's grant allows it). Every policy is cluster-wide
and bakes the cluster's entitlements into `variables` as CEL map literals keyed by
namespace (unforgeable: `request.namespace`) or by team, one entry per line, so a PR that
changes a team's grant shows up as a one-line diff in the policy. Claims are read in every
served shape: v1/v1beta2 requests (`exactly` or `firstAvailable`) and v1beta1 flat requests
(device fields on the request itself) are all checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

from compiler.cel.literal import CelLiteral, cel_literal
from compiler.cel.value_bounds import Shape
from compiler.kueue_versions import NEWEST_KUEUE, kueue_release
from compiler.versions import DRA_GROUP


@dataclass(frozen=True)
class Entitlements:
    """What the cluster's policy grants, per namespace or per team (empty grants left out)."""

    teams: Mapping[str, str]
    """namespace -> team"""
    tiers: Mapping[str, list[str]]
    """namespace -> tiers it holds a quota for"""
    templates: Mapping[str, list[str]]
    """namespace -> its ResourceClaimTemplates"""
    priorities: Mapping[str, list[str]]
    """team -> PriorityClasses it may use"""
    tolerate_exists: Mapping[str, dict[str, list[str]]]
    """team -> taint key it may tolerate with any value -> effects ("": every effect)"""
    tolerate_equal: Mapping[str, dict[str, dict[str, list[str]]]]
    """team -> taint key -> value it may tolerate -> effects ("": every effect)"""
    tolerable: Mapping[str, str]
    """team -> its tolerations in words, `key=value:effect` (`*` for any), for messages"""
    admin_namespaces: list[str]
    device_plugin_resources: list[str]
    """Device-plugin resources refused by exact name (none a tier serves through DRA)."""
    device_plugin_domains: list[str]
    """Domains whose every resource is refused, as prefixes (`nvidia.com/`)."""
    served_by_dra: list[str]
    """Names in those domains that a tier serves through DRA: never refused."""
    gpu_runtime_classes: list[str]
    gpu_environment: list[str]
    allowances: Mapping[str, list[str]]
    """team -> the ways around DRA its grant allows (`devicePluginResources`,
    `gpuEnvironment`, `gpuRuntimeClasses`)"""
    gpu_classes: Mapping[str, str]
    """DeviceClass -> what installs it (`tier` or `driver`): every class that hands out GPUs."""
    system_namespaces: list[str]
    """Namespaces of the platform's GPU components (and kube-system), which no team owns."""
    deny_unowned_claims: bool
    claim_api: str
    """The version of resource.k8s.io the cluster serves claims at (e.g. `v1`)."""
    node_taints: list[dict[str, str]] = field(default_factory=list)
    """The node taints of the cluster's GPU pools (`key`, `value`, `effect`, and `name` as
    `key=value:effect`)."""
    node_tolerations: Mapping[str, list[str]] = field(default_factory=dict)
    """namespace -> the node taints (by name) its pods that claim devices may tolerate"""
    gpu_nodes: list[dict[str, str]] = field(default_factory=list)
    """How the nodes of tainted pools a pattern names are named (`pool`, `prefix`, `suffix`
    around the index)."""
    gpu_node_names: Mapping[str, str] = field(default_factory=dict)
    """node name -> pool, for the nodes of tainted pools that list their names."""
    dra_extended_resources: list[str] = field(default_factory=list)
    """The extended resources tiers serve through DRA (a pod asking for one claims devices)."""

    @cached_property
    def teams_literal(self) -> CelLiteral:
        """`teams` as a CEL literal: most families declare it, and a cluster's is the same in
        each (written once, not once a family)."""
        return cel_literal(dict(self.teams))


ResourceRule = tuple[str, str, tuple[str, ...]]
"""(API group, version, resources) of one `matchConstraints.resourceRules` entry. Each names a
concrete group and version: the API server type-checks a policy only against the kinds its
rules name without a wildcard. A request at another version of the same resource still
matches (matchPolicy Equivalent converts it)."""

POD_RULE: ResourceRule = ("", "v1", ("pods",))
_KUEUE_GROUP, _KUEUE_VERSION = kueue_release(NEWEST_KUEUE).api.split("/")
KUEUE_WORKLOAD_RULE: ResourceRule = (_KUEUE_GROUP, _KUEUE_VERSION, ("workloads",))
ANY_RULE: ResourceRule = ("*", "*", ("*",))
"""Every kind: only for a check that reads nothing but `metadata`, which every kind has."""


def claim_rule(data: Entitlements) -> ResourceRule:
    """ResourceClaims and ResourceClaimTemplates at the version the cluster serves them."""
    return (DRA_GROUP, data.claim_api, ("resourceclaims", "resourceclaimtemplates"))


@dataclass(frozen=True)
class Validation:
    """One CEL check, its denial message expression and a static fallback message."""

    expression: str
    message_expression: str
    message: str


@dataclass(frozen=True)
class PolicyRule:
    """Everything a ValidatingAdmissionPolicy of one rule family says."""

    name: str
    clause: str
    """The team clause the policy enforces (for the provenance annotation)."""
    rules: tuple[ResourceRule, ...]
    operations: tuple[str, ...]
    object_shape: Shape
    variables: tuple[tuple[str, str], ...]
    validations: tuple[Validation, ...]
    match_conditions: tuple[tuple[str, str], ...] = field(default=())
    fleet_clauses: tuple[str, ...] = ()
    """The Fleet clauses the policy enforces too (for the provenance annotation)."""
    binds_every_namespace: bool = False
    """Bound to every namespace, its matchConditions picking them by name; otherwise bound
    to gpufleet's team namespaces."""


def common_variables(data: Entitlements) -> list[tuple[str, str]]:
    """`teams` (namespace -> team), `team` and `subject` (what the request is, for messages)."""
    return [
        ("teams", data.teams_literal),
        (
            "team",
            'request.namespace in variables.teams ? variables.teams[request.namespace] : "(none)"',
        ),
        SUBJECT,
    ]


SUBJECT = (
    "subject",
    'request.kind.kind + " " + request.namespace + "/" + '
    '(has(object.metadata.name) ? object.metadata.name : "")',
)
"""What the request is, for messages (`Pod ml-research/train-0`)."""


def claim_variables(data: Entitlements) -> list[tuple[str, str]]:
    """The common variables and the claim's `choices` (`choice_variables`)."""
    return [*common_variables(data), *choice_variables()]


def choice_variables() -> list[tuple[str, str]]:
    """`choices`: per request of a claim (or claim template), the device requests it may be
    served by, in every served shape (v1/v1beta2 `exactly` or `firstAvailable` subrequests,
    v1beta1 fields on the request itself)."""
    return [
        (
            "claim",
            'request.kind.kind == "ResourceClaimTemplate" ? object.spec.spec : object.spec',
        ),
        (
            "requests",
            "has(variables.claim.devices) && has(variables.claim.devices.requests)\n"
            "  ? variables.claim.devices.requests : []",
        ),
        (
            "choices",
            "variables.requests.map(r,\n"
            "  (has(r.exactly) ? [r.exactly] : [])\n"
            "  + (has(r.firstAvailable) ? r.firstAvailable : [])\n"
            "  + [r])",
        ),
    ]


def listed(expression: str, none: str) -> str:
    """CEL for a list in words: its items joined by commas, or `none` when it is empty."""
    return f'({expression}.size() > 0 ? {expression}.join(", ") : "{none}")'
