"""Rule families on pods and Kueue workloads: PriorityClasses, no device-plugin resources."""

from __future__ import annotations

from compiler.cel import kubernetes_shapes as k8s
from compiler.cel.literal import cel_literal
from compiler.emit.admission_rules import (
    Entitlements,
    PolicyRule,
    Validation,
    common_variables,
    listed,
)

PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"


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
            *common_variables(data),
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
                f"+ {listed('variables.allowed', '(none)')}",
                "gpufleet: a team may only use the PriorityClasses its policy allows",
            ),
        ),
    )


def dra_only(data: Entitlements) -> PolicyRule | None:
    """Pods in gpufleet namespaces request no device-plugin resource: DRA is the one model.

    None when no resource is forbidden (the fleet lists none, or tiers serve them all).
    """
    if not data.device_plugin_resources:
        return None
    return PolicyRule(
        name="gpufleet-dra-only",
        clause="namespaces",
        fleet_clause="devicePluginResources",
        api_groups=("",),
        resources=("pods",),
        operations=("CREATE",),
        object_shape=k8s.POD,
        variables=(
            *common_variables(data),
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
                f"+ {listed('variables.claimable', '(none in this namespace)')}",
                "gpufleet: pods in gpufleet namespaces get GPUs through DRA claims, not "
                "device-plugin resources",
            ),
        ),
    )
