"""Rule families on ResourceClaims and ResourceClaimTemplates: tiers, tolerations, adminAccess,
and (opt-in) no GPU claims in namespaces no team owns."""

from __future__ import annotations

from compiler.cel import kubernetes_shapes as k8s
from compiler.cel.literal import cel_literal
from compiler.emit.admission_rules import (
    SUBJECT,
    Entitlements,
    PolicyRule,
    Validation,
    choice_variables,
    claim_rule,
    claim_variables,
    listed,
)

CLAIMS = k8s.union(k8s.RESOURCE_CLAIM, k8s.RESOURCE_CLAIM_TEMPLATE)


def tier_entitlement(data: Entitlements) -> PolicyRule:
    """Claims and claim templates name only DeviceClasses of tiers the namespace holds."""
    return PolicyRule(
        name="gpufleet-tier-entitlement",
        clause="quotas",
        rules=(claim_rule(data),),
        operations=("CREATE",),
        object_shape=CLAIMS,
        variables=(
            *claim_variables(data),
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
                f"+ {listed('variables.allowed', '(none)')}",
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
        rules=(claim_rule(data),),
        operations=("CREATE",),
        object_shape=CLAIMS,
        variables=(
            *claim_variables(data),
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
        rules=(claim_rule(data),),
        operations=("CREATE",),
        object_shape=CLAIMS,
        variables=(*claim_variables(data), ("admin", cel_literal(data.admin_namespaces))),
        validations=(
            Validation(
                "request.namespace in variables.admin || variables.choices.all(c,\n"
                "  c.all(d, !has(d.adminAccess) || d.adminAccess != true))",
                'variables.subject + " requests adminAccess: true, which team "\n'
                '+ variables.team + " may not use in namespace " + request.namespace\n'
                '+ "; remove adminAccess (admin namespaces: "\n'
                f'+ {listed("variables.admin", "none")} + ")"',
                "gpufleet: adminAccess device requests are only allowed in admin namespaces",
            ),
        ),
    )


def unowned_claims(data: Entitlements) -> PolicyRule | None:
    """With the fleet's `denyUnownedClaims`: no claim or claim template names a GPU
    DeviceClass (a tier's, or one the driver installs) in a namespace no team owns, except
    the platform's system namespaces and kube-system. Without it a namespace outside every
    grant could claim the cluster's GPUs past every team's quota.

    Bound to every namespace; its matchConditions pick the unowned ones by name (team
    namespaces, then system namespaces, one per line), which no label can fake.
    """
    if not data.deny_unowned_claims:
        return None
    return PolicyRule(
        name="gpufleet-unowned-claims",
        clause="namespaces",
        fleet_clauses=("denyUnownedClaims", "systemNamespaces"),
        rules=(claim_rule(data),),
        operations=("CREATE",),
        object_shape=CLAIMS,
        binds_every_namespace=True,
        match_conditions=(
            ("no-team-namespace", f"!(request.namespace in {cel_literal(dict(data.teams))})"),
            (
                "no-system-namespace",
                f"!(request.namespace in {cel_literal(data.system_namespaces)})",
            ),
        ),
        variables=(
            SUBJECT,
            *choice_variables(),
            ("gpu_classes", cel_literal(dict(data.gpu_classes))),
            (
                "named",
                "variables.choices.map(c, c\n"
                "  .filter(d, has(d.deviceClassName)\n"
                "    && d.deviceClassName in variables.gpu_classes)\n"
                "  .map(d, d.deviceClassName))",
            ),
        ),
        validations=(
            Validation(
                "variables.named.all(names, names.size() == 0)",
                'variables.subject + " names GPU DeviceClass "\n'
                '+ variables.named.map(n, n.join(", ")).filter(s, s != "").join(", ")\n'
                '+ " in namespace " + request.namespace\n'
                '+ ", which no team owns: GPUs are claimed only in team namespaces"',
                "gpufleet: GPU claims are only allowed in namespaces a team owns",
            ),
        ),
    )
