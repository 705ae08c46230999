"""Rule families on pods and Kueue workloads: PriorityClasses, and no way to GPUs around DRA
(device-plugin resources, GPU runtime classes, the NVIDIA container runtime's variables)."""

from __future__ import annotations

from collections.abc import Callable

from compiler.cel import kubernetes_shapes as k8s
from compiler.cel.literal import cel_literal
from compiler.cel.value_bounds import Shape
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


def _indented(cel: str, spaces: int) -> str:
    """`cel` with its continuation lines moved right by `spaces`."""
    return cel.replace("\n", "\n" + " " * spaces)


_PLUGIN_RESOURCE = (
    "!(r in variables.served) && (r in variables.forbidden\n"
    "  || variables.domains.exists(d, r.startsWith(d)))"
)
"""Whether resource name `r` is a device-plugin resource the fleet refuses."""
_SETS_GPU_ENVIRONMENT = "has(c.env) && c.env.exists(e, e.name in variables.environment)"
EPHEMERAL_CONTAINERS = "ephemeralcontainers"
POD_CONTAINERS_RULE: ResourceRule = ("", "v1", ("pods", f"pods/{EPHEMERAL_CONTAINERS}"))
"""Pods, and the subresource that adds ephemeral containers to one (`kubectl debug`)."""

_CONTAINERS = ("containers", "containers", "container")
_INIT_CONTAINERS = ("init_containers", "initContainers", "init container")
_EPHEMERAL_CONTAINERS = ("ephemeral_containers", "ephemeralContainers", "ephemeral container")
"""(variable, pod spec field, what it holds in words) of each list of containers."""


_ASKED = (
    "(has(c.resources.limits) ? c.resources.limits.filter(r,\n"
    f"  {_indented(_PLUGIN_RESOURCE, 2)}) : [])\n"
    "+ (has(c.resources.requests) ? c.resources.requests.filter(r,\n"
    f"  {_indented(_PLUGIN_RESOURCE, 2)}\n"
    "  && !(has(c.resources.limits) && r in c.resources.limits)) : [])"
)
"""The device-plugin resources container `c` asks for, each once (in limits, or only in
requests)."""


def _claim_instead(data: Entitlements) -> list[tuple[str, str]]:
    """`claimable`: the namespace's ResourceClaimTemplates, for messages."""
    return [
        ("templates", cel_literal(dict(data.templates))),
        (
            "claimable",
            "request.namespace in variables.templates\n"
            "  ? variables.templates[request.namespace] : []",
        ),
    ]


def _allowed(data: Entitlements) -> list[tuple[str, str]]:
    """`allowed`: the ways around DRA the team's grant allows (its `allow`)."""
    return [
        ("allowances", cel_literal(dict(data.allowances))),
        (
            "allowed",
            "variables.team in variables.allowances\n  ? variables.allowances[variables.team] : []",
        ),
    ]


_CLAIM_INSTEAD = (
    '+ " gets GPUs only through DRA; drop it and claim devices with'
    ' spec.resourceClaims from a ResourceClaimTemplate: "\n'
    f"+ {listed('variables.claimable', '(none in this namespace)')}"
)


def _in_container(offending: str, what: str) -> str:
    """Message CEL: ` in <what> <first offender>` and how many more offend."""
    return (
        f'+ " in {what} " + variables.{offending}[0].name\n'
        f"+ (variables.{offending}.size() > 1\n"
        f'  ? " and " + string(variables.{offending}.size() - 1) + " more" : "")\n'
    )


def _plugin_check(
    containers: tuple[str, str, str],
) -> tuple[list[tuple[str, str]], Validation]:
    """The variables and the validation that refuse device-plugin resources in one list of
    containers (one validation per list keeps each within the per-call cost limit)."""
    variable, field, what = containers
    offending, asked = f"plugin_{variable}", f"asked_{variable}"
    variables = [
        (variable, f"has(object.spec.{field}) ? object.spec.{field} : []"),
        (
            offending,
            f"variables.{variable}.filter(c, has(c.resources) && (\n"
            "  (has(c.resources.limits) && c.resources.limits.exists(r,\n"
            f"    {_indented(_PLUGIN_RESOURCE, 4)}))\n"
            "  || (has(c.resources.requests) && c.resources.requests.exists(r,\n"
            f"    {_indented(_PLUGIN_RESOURCE, 4)}))))",
        ),
        (
            asked,
            f"variables.{offending}.size() == 0 ? []\n"
            f": [variables.{offending}[0]].map(c,\n  {_indented(_ASKED, 2)})[0]",
        ),
    ]
    validation = Validation(
        f'"devicePluginResources" in variables.allowed\n|| variables.{offending}.size() == 0',
        'variables.subject + " requests device-plugin resource "\n'
        f'+ variables.{asked}.join(" and ")\n'
        f"{_in_container(offending, what)}"
        '+ ": team " + variables.team\n' + _CLAIM_INSTEAD,
        "gpufleet: pods in gpufleet namespaces get GPUs through DRA claims, not "
        "device-plugin resources",
    )
    return variables, validation


def dra_only(data: Entitlements) -> PolicyRule | None:
    """Pods in gpufleet namespaces reach GPUs only through DRA: no device-plugin resource in
    the requests or limits of a container or init container (those the fleet lists by name,
    every resource of a domain it lists as `<domain>/*`, the MIG resources
    `nvidia.com/mig-<profile>` of partitionable GPUs; never a name a tier serves through
    DRA) and no GPU runtime class (which hands every GPU of the node to the pod). A team
    whose grant allows `devicePluginResources` or `gpuRuntimeClasses` may use that one.
    (Ephemeral containers may not have resources, and a pod's runtime class never changes.)

    None when nothing is forbidden (the fleet lists nothing, or tiers serve it all).
    """
    plugin = data.device_plugin_resources or data.device_plugin_domains
    if not plugin and not data.gpu_runtime_classes:
        return None
    in_containers, containers_checked = _plugin_check(_CONTAINERS)
    in_init, init_checked = _plugin_check(_INIT_CONTAINERS)
    return PolicyRule(
        name="gpufleet-dra-only",
        clause="allow",
        fleet_clauses=("devicePluginResources", "gpuRuntimeClasses"),
        rules=(POD_RULE,),
        operations=("CREATE",),
        object_shape=k8s.POD,
        variables=(
            *common_variables(data),
            *_allowed(data),
            ("forbidden", cel_literal(data.device_plugin_resources)),
            ("domains", cel_literal(data.device_plugin_domains)),
            ("served", cel_literal(data.served_by_dra)),
            ("runtimes", cel_literal(data.gpu_runtime_classes)),
            *_claim_instead(data),
            *in_containers,
            *in_init,
        ),
        validations=(
            containers_checked,
            init_checked,
            Validation(
                '"gpuRuntimeClasses" in variables.allowed\n'
                "|| !has(object.spec.runtimeClassName)\n"
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


def _environment_check(
    containers: tuple[str, str, str], source: str
) -> tuple[list[tuple[str, str]], Validation]:
    """The variables and the validation that refuse the GPU environment in one list of
    containers (`source`: the CEL of the containers to judge)."""
    variable, _, what = containers
    offending, names = f"environment_{variable}", f"set_{variable}"
    variables = [
        (variable, source),
        (offending, f"variables.{variable}.filter(c,\n  {_SETS_GPU_ENVIRONMENT})"),
        (
            names,
            f"variables.{offending}.size() == 0 ? [] : variables.environment.filter(n,\n"
            f"  n in variables.{offending}[0].env.map(e, e.name))",
        ),
    ]
    validation = Validation(
        f'"gpuEnvironment" in variables.allowed\n|| variables.{offending}.size() == 0',
        f'variables.subject + " sets " + variables.{names}.join(" and ")\n'
        f"{_in_container(offending, what)}"
        '+ ", which the NVIDIA container runtime reads to hand GPUs to a container: team "\n'
        "+ variables.team\n" + _CLAIM_INSTEAD,
        "gpufleet: containers in gpufleet namespaces may not set the NVIDIA container "
        "runtime's GPU variables",
    )
    return variables, validation


def _created(field: str) -> str:
    """CEL: a pod's `field` containers when it is created, none on an update."""
    return (
        f'request.operation != "CREATE" || !has(object.spec.{field}) ? []\n  : object.spec.{field}'
    )


_ADDED = (
    'request.operation == "CREATE" || !has(object.spec.ephemeralContainers) ? []\n'
    "  : object.spec.ephemeralContainers.filter(c,\n"
    "    !has(oldObject.spec.ephemeralContainers)\n"
    "    || !oldObject.spec.ephemeralContainers.exists(o, o.name == c.name))"
)
"""CEL: the ephemeral containers an update of pods/ephemeralcontainers adds."""


def gpu_environment(data: Entitlements) -> PolicyRule | None:
    """No container in gpufleet namespaces sets a variable the NVIDIA container runtime reads
    to expose GPUs (the fleet's `gpuEnvironment`: NVIDIA_VISIBLE_DEVICES, ...), unless the
    team's grant allows `gpuEnvironment`: containers and init containers when a pod is
    created, ephemeral containers when one is added (`kubectl debug --env`, an UPDATE of
    pods/ephemeralcontainers, which judges only the ephemeral containers it adds).

    Not checked, because admission cannot see them: `envFrom` (the values live in ConfigMaps
    and Secrets, which may change after the pod is admitted) and the image's own ENV (CUDA
    images set NVIDIA_VISIBLE_DEVICES=all). Closing those is the runtime's part: the NVIDIA
    container toolkit ignores the variable for unprivileged containers with
    `accept-nvidia-visible-devices-envvar-when-unprivileged = false`.

    A policy of its own, not part of gpufleet-dra-only: it also matches ephemeral-container
    updates, which DRA-only's other checks must not judge again, and it walks every variable
    of every container, which takes its own cost budget.

    None when the fleet lists no variable.
    """
    if not data.gpu_environment:
        return None
    checks = [
        _environment_check(_CONTAINERS, _created("containers")),
        _environment_check(_INIT_CONTAINERS, _created("initContainers")),
        _environment_check(_EPHEMERAL_CONTAINERS, _ADDED),
    ]
    return PolicyRule(
        name="gpufleet-gpu-environment",
        clause="allow",
        fleet_clauses=("gpuEnvironment",),
        rules=(POD_CONTAINERS_RULE,),
        operations=("CREATE", "UPDATE"),
        object_shape=k8s.POD,
        match_conditions=(
            (
                "created-or-debugged",
                'request.operation == "CREATE"\n'
                f'|| (has(request.subResource) && request.subResource == "{EPHEMERAL_CONTAINERS}")',
            ),
        ),
        variables=(
            *common_variables(data),
            *_allowed(data),
            ("environment", cel_literal(data.gpu_environment)),
            *_claim_instead(data),
            *(variable for variables, _ in checks for variable in variables),
        ),
        validations=tuple(validation for _, validation in checks),
    )
