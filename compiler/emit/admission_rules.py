"""The five admission rule families as CEL: what each ValidatingAdmissionPolicy checks.

Every policy is cluster-wide and bakes the cluster's entitlements into `variables` as CEL
map literals keyed by namespace (unforgeable: `request.namespace`) or by team, one entry
per line, so a PR that changes a team's grant shows up as a one-line diff in the policy.
Claims are read in every served shape: v1/v1beta2 requests (`exactly` or `firstAvailable`)
and v1beta1 flat requests (device fields on the request itself) are all checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from compiler.cel import kubernetes_shapes as k8s
from compiler.cel.literal import cel_literal
from compiler.cel.shapes import Shape

PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"


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
    api_groups: tuple[str, ...]
    resources: tuple[str, ...]
    operations: tuple[str, ...]
    object_shape: Shape
    variables: tuple[tuple[str, str], ...]
    validations: tuple[Validation, ...]
    match_conditions: tuple[tuple[str, str], ...] = field(default=())


def _common(data: Entitlements) -> list[tuple[str, str]]:
    return [
        ("teams", cel_literal(dict(data.teams))),
        (
            "team",
            'request.namespace in variables.teams ? variables.teams[request.namespace] : "(none)"',
        ),
        (
            "subject",
            'request.kind.kind + " " + request.namespace + "/" + '
            '(has(object.metadata.name) ? object.metadata.name : "")',
        ),
    ]


def _claims(data: Entitlements) -> list[tuple[str, str]]:
    return [
        *_common(data),
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


def _listed(expression: str, none: str) -> str:
    return f'({expression}.size() > 0 ? {expression}.join(", ") : "{none}")'


def tier_entitlement(data: Entitlements) -> PolicyRule:
    """Claims and claim templates name only DeviceClasses of tiers the namespace holds."""
    return PolicyRule(
        name="gpufleet-tier-entitlement",
        clause="quotas",
        api_groups=("resource.k8s.io",),
        resources=("resourceclaims", "resourceclaimtemplates"),
        operations=("CREATE",),
        object_shape=k8s.union(k8s.RESOURCE_CLAIM, k8s.RESOURCE_CLAIM_TEMPLATE),
        variables=(
            *_claims(data),
            ("tiers", cel_literal(dict(data.tiers))),
            (
                "allowed",
                "request.namespace in variables.tiers ? variables.tiers[request.namespace] : []",
            ),
            (
                "denied",
                "variables.choices.map(c, c\n"
                "  .filter(d, has(d.deviceClassName)\n"
                "    && !(d.deviceClassName in variables.allowed))\n"
                "  .map(d, d.deviceClassName))",
            ),
        ),
        validations=(
            Validation(
                "variables.denied.all(names, names.size() == 0)",
                'variables.subject + " names DeviceClass "\n'
                '+ variables.denied.map(n, n.join(", ")).filter(s, s != "").join(", ")\n'
                '+ ", which team " + variables.team + " holds no quota for in namespace "\n'
                '+ request.namespace + "; use one of its tiers: "\n'
                f"+ {_listed('variables.allowed', '(none)')}",
                "gpufleet: a claim may only name the DeviceClasses of the GPU tiers its "
                "namespace holds a quota for",
            ),
        ),
    )


_TOLERATED = (
    "has(t.key) && (\n"
    "    (t.key in variables.exists\n"
    '      && ("" in variables.exists[t.key]\n'
    "        || (has(t.effect) && t.effect in variables.exists[t.key])))\n"
    '    || ((has(t.operator) ? t.operator : "Equal") == "Equal"\n'
    "      && t.key in variables.equal\n"
    '      && (has(t.value) ? t.value : "") in variables.equal[t.key]\n'
    '      && ("" in variables.equal[t.key][has(t.value) ? t.value : ""]\n'
    "        || (has(t.effect)\n"
    '          && t.effect in variables.equal[t.key][has(t.value) ? t.value : ""]))))'
)


def device_tolerations(data: Entitlements) -> PolicyRule:
    """Claims tolerate only device taints their team may tolerate, never more widely.

    A claim's toleration passes if the team may tolerate its key with `Exists` (then any
    operator and value pass), or with `Equal` and the same value; and the team's effect for
    it is unset (any effect) or the claim's. An empty key or effect (every taint, every
    effect) passes only where the team's grant is as wide. Lookups are in maps, so the cost
    does not grow with the number of tolerations a team has.
    """
    return PolicyRule(
        name="gpufleet-device-tolerations",
        clause="tolerations",
        api_groups=("resource.k8s.io",),
        resources=("resourceclaims", "resourceclaimtemplates"),
        operations=("CREATE",),
        object_shape=k8s.union(k8s.RESOURCE_CLAIM, k8s.RESOURCE_CLAIM_TEMPLATE),
        variables=(
            *_claims(data),
            ("tolerate_exists", cel_literal(dict(data.tolerate_exists))),
            ("tolerate_equal", cel_literal(dict(data.tolerate_equal))),
            ("tolerable", cel_literal(dict(data.tolerable))),
            (
                "exists",
                "variables.team in variables.tolerate_exists\n"
                "  ? variables.tolerate_exists[variables.team] : {}",
            ),
            (
                "equal",
                "variables.team in variables.tolerate_equal\n"
                "  ? variables.tolerate_equal[variables.team] : {}",
            ),
            (
                "denied",
                "variables.choices.map(c, c.map(d, !has(d.tolerations) ? [] : d.tolerations\n"
                f"  .filter(t, !({_TOLERATED}))))",
            ),
        ),
        validations=(
            Validation(
                "variables.denied.all(c, c.all(d, d.size() == 0))",
                'variables.subject + " tolerates device taint "\n'
                "+ variables.denied.filter(c, c.exists(d, d.size() > 0))[0]\n"
                "  .filter(d, d.size() > 0)[0]\n"
                '  .map(t, (has(t.key) && t.key != "" ? t.key : "*") + "="\n'
                '    + ((has(t.operator) ? t.operator : "Equal") == "Exists" ? "*"\n'
                '      : (has(t.value) ? t.value : ""))\n'
                '    + ":" + (has(t.effect) && t.effect != "" ? t.effect : "*")).join(", ")\n'
                '+ ", which team " + variables.team + " may not tolerate; it may tolerate: "\n'
                "+ (variables.team in variables.tolerable\n"
                '  ? variables.tolerable[variables.team] : "(none)")',
                "gpufleet: a claim may only tolerate the device taints its team may tolerate",
            ),
        ),
    )


def admin_access(data: Entitlements) -> PolicyRule:
    """`adminAccess: true` only in the namespaces of teams the policy marks as admin."""
    return PolicyRule(
        name="gpufleet-admin-access",
        clause="adminAccess",
        api_groups=("resource.k8s.io",),
        resources=("resourceclaims", "resourceclaimtemplates"),
        operations=("CREATE",),
        object_shape=k8s.union(k8s.RESOURCE_CLAIM, k8s.RESOURCE_CLAIM_TEMPLATE),
        variables=(*_claims(data), ("admin", cel_literal(data.admin_namespaces))),
        validations=(
            Validation(
                "request.namespace in variables.admin || variables.choices.all(c,\n"
                "  c.all(d, !has(d.adminAccess) || d.adminAccess != true))",
                'variables.subject + " requests adminAccess: true, which team "\n'
                '+ variables.team + " may not use in namespace " + request.namespace\n'
                '+ "; remove adminAccess (admin namespaces: "\n'
                f'+ {_listed("variables.admin", "none")} + ")"',
                "gpufleet: adminAccess device requests are only allowed in admin namespaces",
            ),
        ),
    )


def _priority_sources(obj: str) -> str:
    pod = 'request.kind.group == "" && request.kind.kind == "Pod"'
    workload = 'request.kind.group == "kueue.x-k8s.io" && request.kind.kind == "Workload"'
    return (
        f'(has({obj}.metadata.labels) && "{PRIORITY_LABEL}" in {obj}.metadata.labels\n'
        f'  ? [{obj}.metadata.labels["{PRIORITY_LABEL}"]] : [])\n'
        f"+ ({pod} && has({obj}.spec.priorityClassName)\n"
        f"  ? [{obj}.spec.priorityClassName] : [])\n"
        f"+ ({workload} && has({obj}.spec.priorityClassName)\n"
        f"  ? [{obj}.spec.priorityClassName] : [])\n"
        f"+ ({workload} && has({obj}.spec.priorityClassRef)\n"
        f"  ? [{obj}.spec.priorityClassRef.name] : [])"
    )


def priority_entitlement(data: Entitlements) -> PolicyRule:
    """Pods, Kueue Workloads and anything labelled for Kueue use only the team's priorities.

    On UPDATE only a newly set priority is checked, so objects that predate the policy can
    still be updated (finalizers removed) as long as they keep their priority.
    """
    return PolicyRule(
        name="gpufleet-priority-entitlement",
        clause="priorities",
        api_groups=("*",),
        resources=("*",),
        operations=("CREATE", "UPDATE"),
        object_shape=k8s.union(k8s.ANY_OBJECT, k8s.POD, k8s.KUEUE_WORKLOAD),
        match_conditions=(
            (
                "carries-a-priority",
                '(request.kind.group == "" && request.kind.kind == "Pod")\n'
                '|| (request.kind.group == "kueue.x-k8s.io" && request.kind.kind == "Workload")\n'
                f'|| (has(object.metadata.labels) && "{PRIORITY_LABEL}" in object.metadata.labels)',
            ),
        ),
        variables=(
            *_common(data),
            ("priorities", cel_literal(dict(data.priorities))),
            (
                "allowed",
                "variables.team in variables.priorities\n"
                "  ? variables.priorities[variables.team] : []",
            ),
            ("requested", _priority_sources("object")),
            (
                "previous",
                'request.operation != "UPDATE" ? [] : (\n' + _priority_sources("oldObject") + ")",
            ),
            (
                "denied",
                'variables.requested.filter(p, p != ""\n'
                "  && !(p in variables.allowed) && !(p in variables.previous))",
            ),
        ),
        validations=(
            Validation(
                "variables.denied.size() == 0",
                'variables.subject + " uses PriorityClass " + variables.denied.join(", ")\n'
                '+ ", which team " + variables.team + " may not use; use one of: "\n'
                f"+ {_listed('variables.allowed', '(none)')}",
                "gpufleet: a team may only use the PriorityClasses its policy allows",
            ),
        ),
    )


def dra_only(data: Entitlements) -> PolicyRule:
    """Pods in gpufleet namespaces request no device-plugin resource: DRA is the one model."""
    return PolicyRule(
        name="gpufleet-dra-only",
        clause="namespaces",
        api_groups=("",),
        resources=("pods",),
        operations=("CREATE",),
        object_shape=k8s.POD,
        variables=(
            *_common(data),
            ("forbidden", cel_literal(data.device_plugin_resources)),
            ("templates", cel_literal(dict(data.templates))),
            (
                "containers",
                "(has(object.spec.containers) ? object.spec.containers : [])\n"
                "+ (has(object.spec.initContainers) ? object.spec.initContainers : [])",
            ),
            (
                "offending",
                "variables.containers.filter(c, has(c.resources)\n"
                "  && variables.forbidden.exists(r,\n"
                "    (has(c.resources.requests) && r in c.resources.requests)\n"
                "    || (has(c.resources.limits) && r in c.resources.limits)))",
            ),
            (
                "claimable",
                "request.namespace in variables.templates\n"
                "  ? variables.templates[request.namespace] : []",
            ),
        ),
        validations=(
            Validation(
                "variables.offending.size() == 0",
                'variables.subject + " requests device-plugin resource "\n'
                '+ variables.forbidden.join(" or ") + " in container "\n'
                "+ variables.offending[0].name + (variables.offending.size() > 1\n"
                '  ? " and " + string(variables.offending.size() - 1) + " more" : "")\n'
                '+ ": team " + variables.team\n'
                '+ " gets GPUs only through DRA; drop it and claim devices with'
                ' spec.resourceClaims from a ResourceClaimTemplate: "\n'
                f"+ {_listed('variables.claimable', '(none in this namespace)')}",
                "gpufleet: pods in gpufleet namespaces get GPUs through DRA claims, not "
                "device-plugin resources",
            ),
        ),
    )


RULE_FAMILIES = (tier_entitlement, priority_entitlement, dra_only, device_tolerations, admin_access)
