"""A team's default priority: pods that name no PriorityClass get their team's default.

Kubernetes has one cluster-wide default (a PriorityClass with `globalDefault: true`), and the
Priority admission plugin writes it into every pod that names no class before any policy
runs, so a global default that some team may not use makes the guardrails deny every such
pod of that team. gpufleet therefore emits no global default. Instead a
MutatingAdmissionPolicy (after the built-in plugins, before the validating policies and
quota) gives a pod that names no class its team's default: the class name, its value and its
preemption policy, exactly what the Priority plugin would have written. Where the cluster
does not serve MutatingAdmissionPolicy (before 1.36 unless declared), nothing is emitted and
such pods run at priority 0 (resolve warns, GF603). docs/default-priority.md has the why.
"""

from __future__ import annotations

from compiler.cel.literal import cel_literal
from compiler.emit.admission import mutating_policy
from compiler.emit.manifest import Manifest
from compiler.ir import ResolvedCluster, ResolvedFleet
from compiler.versions import Feature

POLICY_NAME = "gpufleet-default-priority"

_NAMES_NO_CLASS = '!has(object.spec.priorityClassName) || object.spec.priorityClassName == ""'
_MUTATION = (
    'variables.class == "" ? Object{} : Object{\n'
    "  spec: Object.spec{\n"
    "    priorityClassName: variables.class,\n"
    "    priority: int(variables.values[variables.class]),\n"
    "    preemptionPolicy: variables.preemption[variables.class]\n"
    "  }\n"
    "}"
)


def default_priority(cluster: ResolvedCluster, fleet: ResolvedFleet) -> list[Manifest]:
    """The default-priority policy and its binding; none where no team has a default or the
    cluster does not serve MutatingAdmissionPolicy."""
    ladder = fleet.ladder
    if ladder is None or not cluster.serves(Feature.MUTATING_ADMISSION_POLICY):
        return []
    defaults = {
        namespace: level
        for team in cluster.teams
        if (level := fleet.team_default(team)) is not None
        for namespace in team.spec.namespaces
    }
    if not defaults:
        return []
    levels = {level.name: level for level in defaults.values()}
    variables = [
        ("classes", cel_literal({ns: level.name for ns, level in sorted(defaults.items())})),
        ("values", cel_literal({name: str(levels[name].value) for name in sorted(levels)})),
        ("preemption", cel_literal({name: levels[name].preemption for name in sorted(levels)})),
        (
            "class",
            'request.namespace in variables.classes ? variables.classes[request.namespace] : ""',
        ),
    ]
    origins = sorted({team.source.origin for team in cluster.teams})
    sources = ", ".join(
        [f"{ladder.source.origin}#levels", *(f"{o}#defaultPriority" for o in origins)]
    )
    values = {
        "match_conditions": [("names-no-class", _NAMES_NO_CLASS)],
        "variables": variables,
        "mutations": [_MUTATION],
    }
    namespaces = ", ".join(f"{o}#namespaces" for o in origins)
    return mutating_policy(cluster, POLICY_NAME, values, sources, namespaces)
