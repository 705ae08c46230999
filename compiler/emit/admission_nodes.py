"""The rule family that keeps GPU nodes for GPU work: only pods that claim devices tolerate the
node taints of GPU pools, or name a GPU node outright.

A pod in a team namespace may tolerate a GPU pool's node taint only if it claims devices
(`spec.resourceClaims`; every claim in a team namespace names the namespace's tiers only, which
gpufleet-tier-entitlement enforces) and the namespace holds quota for a tier with devices in a
pool carrying that taint. A pod that claims nothing may not set `spec.nodeName` to a node of a
tainted pool either, since naming the node skips the scheduler and with it every NoSchedule
taint. On UPDATE (pods may gain tolerations while pending) only the tolerations it adds are
judged, so pods that predate the policy can still be updated.
"""

from __future__ import annotations

from compiler.cel import kubernetes_shapes as k8s
from compiler.cel.literal import cel_literal
from compiler.emit.admission_rules import (
    POD_RULE,
    Entitlements,
    PolicyRule,
    Validation,
    common_variables,
    listed,
)

TOLERATES = (
    '(has(t.key) && t.key != "" ? t.key == n.key\n'
    '    : has(t.operator) && t.operator == "Exists")\n'
    '  && ((has(t.operator) && t.operator == "Exists")\n'
    '    || (has(t.value) ? t.value : "") == n.value)\n'
    '  && (!has(t.effect) || t.effect == "" || t.effect == n.effect)'
)
"""CEL: whether pod toleration `t` tolerates node taint `n` (Kubernetes' ToleratesTaint: an
empty key with Exists tolerates every key, Exists any value, an empty effect every effect)."""
_TOLERATES_NESTED = TOLERATES.replace("\n", "\n      ")


def claims_devices(extended: list[str]) -> str:
    """CEL: whether the pod claims devices: it names claims (`spec.resourceClaims`) or a
    container asks for an extended resource a tier serves through DRA (`extended`), for which
    the scheduler makes the claim. Uses no policy variable, so matchConditions may use it."""
    named = "has(object.spec.resourceClaims) && object.spec.resourceClaims.size() > 0"
    if not extended:
        return named
    asks = (
        "has(object.spec.{field}) && object.spec.{field}.exists(c, has(c.resources)\n"
        "    && has(c.resources.limits)\n"
        "    && c.resources.limits.exists(r, r in " + cel_literal(extended) + "))"
    )
    return "\n|| ".join(
        [named, f"({asks.format(field='containers')})", f"({asks.format(field='initContainers')})"]
    )


def gpu_node_tolerations(data: Entitlements) -> PolicyRule | None:
    """Only pods that claim devices of the namespace's tiers tolerate GPU pools' node taints
    or name a GPU node (None when no pool of the cluster has a node taint)."""
    if not data.node_taints:
        return None
    names_listed = bool(data.gpu_node_names)
    on_gpu_node = (
        "variables.gpu_nodes.exists(p, object.spec.nodeName.startsWith(p.prefix)\n"
        "  && object.spec.nodeName.endsWith(p.suffix))"
    )
    if names_listed:
        on_gpu_node = f"({on_gpu_node}\n  || object.spec.nodeName in variables.gpu_node_names)"
    return PolicyRule(
        name="gpufleet-gpu-nodes",
        clause="quotas",
        rules=(POD_RULE,),
        operations=("CREATE", "UPDATE"),
        object_shape=k8s.POD,
        variables=(
            *common_variables(data),
            ("node_taints", cel_literal(data.node_taints)),
            ("node_tolerations", cel_literal(dict(data.node_tolerations))),
            ("gpu_nodes", cel_literal(data.gpu_nodes)),
            *([("gpu_node_names", cel_literal(dict(data.gpu_node_names)))] if names_listed else []),
            ("templates", cel_literal(dict(data.templates))),
            (
                "claimable",
                "request.namespace in variables.templates\n"
                "  ? variables.templates[request.namespace] : []",
            ),
            ("claimed", claims_devices(data.dra_extended_resources)),
            (
                "allowed",
                "variables.claimed && request.namespace in variables.node_tolerations\n"
                "  ? variables.node_tolerations[request.namespace] : []",
            ),
            (
                "added",
                "!has(object.spec.tolerations) ? [] : object.spec.tolerations.filter(t,\n"
                '  request.operation != "UPDATE" || !has(oldObject.spec.tolerations)\n'
                "  || !oldObject.spec.tolerations.exists(o, o == t))",
            ),
            (
                "denied",
                "variables.node_taints.filter(n, !(n.name in variables.allowed)\n"
                f"  && variables.added.exists(t,\n      {_TOLERATES_NESTED}))\n"
                ".map(n, n.name)",
            ),
        ),
        validations=(
            Validation(
                "variables.denied.size() == 0",
                'variables.subject + " tolerates the GPU node taint "\n'
                '+ variables.denied.join(", ") + (variables.claimed\n'
                '  ? " of nodes whose GPUs namespace " + request.namespace\n'
                '    + " holds no quota for"\n'
                '  : " but claims no device: team " + variables.team\n'
                '    + " may run only pods that claim GPUs on GPU nodes, whose CPU and memory"\n'
                '    + " are kept for them; remove the toleration, or claim a device"\n'
                '    + " (spec.resourceClaims) from a ResourceClaimTemplate: "\n'
                f"    + {listed('variables.claimable', '(none in this namespace)')})",
                "gpufleet: only pods that claim GPUs may tolerate the node taint of GPU nodes",
            ),
            Validation(
                'request.operation != "CREATE" || variables.claimed\n'
                "|| !has(object.spec.nodeName)\n"
                f"|| !{on_gpu_node}",
                'variables.subject + " names node " + object.spec.nodeName\n'
                '+ " of a GPU pool in spec.nodeName but claims no device: team " + variables.team\n'
                '+ " may run only pods that claim GPUs on GPU nodes; drop spec.nodeName"',
                "gpufleet: only pods that claim GPUs may be placed on GPU nodes",
            ),
        ),
    )
