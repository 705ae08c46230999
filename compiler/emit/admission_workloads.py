"""Rule families on pods and Kueue workloads: PriorityClasses, no device-plugin resources."""

from __future__ import annotations

from collections.abc import Callable

from compiler.cel import kubernetes_shapes as k8s
from compiler.cel.literal import cel_literal
from compiler.cel.shapes import Shape
from compiler.emit.admission_rules import (
    ANY_RULE,
    KUEUE_WORKLOAD_RULE,
    POD_RULE,
    Entitlements,
    PolicyRule,
    ResourceRule,
    Validation,
    common_variables,
    listed,
)

PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"


_POD = 'request.kind.group == "" && request.kind.kind == "Pod"'
_WORKLOAD = 'request.kind.group == "kueue.x-k8s.io" && request.kind.kind == "Workload"'
_LABELLED = f'has(object.metadata.labels) && "{PRIORITY_LABEL}" in object.metadata.labels'


def _label_source(obj: str) -> str:
    return (
        f'(has({obj}.metadata.labels) && "{PRIORITY_LABEL}" in {obj}.metadata.labels\n'
        f'  ? [{obj}.metadata.labels["{PRIORITY_LABEL}"]] : [])'
    )


def _typed_sources(obj: str) -> str:
    return (
        f"{_label_source(obj)}\n"
        f"+ ({_POD} && has({obj}.spec.priorityClassName)\n"
        f"  ? [{obj}.spec.priorityClassName] : [])\n"
        f"+ ({_WORKLOAD} && has({obj}.spec.priorityClassName)\n"
        f"  ? [{obj}.spec.priorityClassName] : [])\n"
        f"+ ({_WORKLOAD} && has({obj}.spec.priorityClassRef)\n"
        f"  ? [{obj}.spec.priorityClassRef.name] : [])"
    )


def _priority_rule(
    data: Entitlements,
    name: str,
    rules: tuple[ResourceRule, ...],
    sources: Callable[[str], str],
    object_shape: Shape,
    match_conditions: tuple[tuple[str, str], ...] = (),
) -> PolicyRule:
    """A policy that denies any priority in `sources(object)` the team may not use; on
    UPDATE only a newly set one, so objects that predate the policy can still be updated
    (finalizers removed) as long as they keep their priority."""
    return PolicyRule(
        name=name,
        clause="priorities",
        rules=rules,
        operations=("CREATE", "UPDATE"),
        object_shape=object_shape,
        match_conditions=match_conditions,
        variables=(
            *common_variables(data),
            ("priorities", cel_literal(dict(data.priorities))),
            (
                "allowed",
                "variables.team in variables.priorities\n"
                "  ? variables.priorities[variables.team] : []",
            ),
            ("requested", sources("object")),
            ("previous", 'request.operation != "UPDATE" ? [] : (\n' + sources("oldObject") + ")"),
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


def priority_entitlement(data: Entitlements) -> PolicyRule:
    """Pods and Kueue Workloads use only the team's priorities (class name, Workload
    priority reference, Kueue's priority label)."""
    return _priority_rule(
        data,
        "gpufleet-priority-entitlement",
        (POD_RULE, KUEUE_WORKLOAD_RULE),
        _typed_sources,
        k8s.union(k8s.POD, k8s.KUEUE_WORKLOAD),
    )


def priority_label(data: Entitlements) -> PolicyRule:
    """Objects of any other kind (Jobs, JobSets, ...) carry only a Kueue priority label of
    the team's priorities: Kueue copies it into the Workload it creates for them.

    The one policy that matches every kind, since Kueue integrates kinds gpufleet cannot
    list; it reads only `metadata.labels`, which every kind has.
    """
    return _priority_rule(
        data,
        "gpufleet-priority-label",
        (ANY_RULE,),
        _label_source,
        k8s.ANY_OBJECT,
        match_conditions=(("labelled-not-typed", f"!({_POD}) && !({_WORKLOAD})\n&& {_LABELLED}"),),
    )


def dra_only(data: Entitlements) -> PolicyRule | None:
    """Pods in gpufleet namespaces reach GPUs only through DRA: no device-plugin resource
    (`nvidia.com/gpu`, the MIG resources `nvidia.com/mig-<profile>` of partitionable GPUs, any
    the fleet lists) and no GPU runtime class (which hands every GPU of the node to the pod).

    None when nothing is forbidden (the fleet lists nothing, or tiers serve it all).
    """
    if not data.device_plugin_resources and not data.gpu_runtime_classes:
        return None
    return PolicyRule(
        name="gpufleet-dra-only",
        clause="namespaces",
        fleet_clause="devicePluginResources",
        rules=(POD_RULE,),
        operations=("CREATE",),
        object_shape=k8s.POD,
        variables=(
            *common_variables(data),
            ("forbidden", cel_literal(data.device_plugin_resources)),
            ("runtimes", cel_literal(data.gpu_runtime_classes)),
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
                "asked",
                "variables.offending.size() == 0 ? [] : variables.forbidden.filter(r,\n"
                "  (has(variables.offending[0].resources.requests)\n"
                "    && r in variables.offending[0].resources.requests)\n"
                "  || (has(variables.offending[0].resources.limits)\n"
                "    && r in variables.offending[0].resources.limits))",
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
                '+ variables.asked.join(" and ") + " in container "\n'
                "+ variables.offending[0].name + (variables.offending.size() > 1\n"
                '  ? " and " + string(variables.offending.size() - 1) + " more" : "")\n'
                '+ ": team " + variables.team\n'
                '+ " gets GPUs only through DRA; drop it and claim devices with'
                ' spec.resourceClaims from a ResourceClaimTemplate: "\n'
                f"+ {listed('variables.claimable', '(none in this namespace)')}",
                "gpufleet: pods in gpufleet namespaces get GPUs through DRA claims, not "
                "device-plugin resources",
            ),
            Validation(
                "!has(object.spec.runtimeClassName)\n"
                "|| !(object.spec.runtimeClassName in variables.runtimes)",
                'variables.subject + " uses runtime class " + object.spec.runtimeClassName\n'
                '+ ", which gives a pod every GPU of its node: team " + variables.team\n'
                '+ " gets GPUs only through DRA; drop runtimeClassName and claim devices from a"\n'
                '+ " ResourceClaimTemplate: "\n'
                f"+ {listed('variables.claimable', '(none in this namespace)')}",
                "gpufleet: pods in gpufleet namespaces may not use a GPU runtime class",
            ),
        ),
    )
