"""The GPU node toleration: pods that claim devices get the node taints of their GPUs' pools.

A GPU pool's nodes carry a node taint (kubelet drop-in, `registerWithTaints`), so a pod runs
there only if it tolerates it, and gpufleet-gpu-nodes lets only pods that claim devices do so.
Rather than have every team copy the toleration into every pod, a MutatingAdmissionPolicy adds
it to pods of team namespaces that claim devices (`spec.resourceClaims`, or an extended resource
a tier serves through DRA): the taints of the pools the namespace's tiers take devices from,
each once, as `Equal` tolerations. It runs after the built-in plugins and before the validating
policies, which therefore see the toleration.
Pods Kueue admits get it from their tier's ResourceFlavor too (compiler.emit.kueue). Where the
cluster does not serve MutatingAdmissionPolicy nothing is emitted (resolve warns, GF603) and
pods that claim devices carry the toleration themselves.
"""

from __future__ import annotations

from compiler.cel.literal import cel_literal
from compiler.emit.admission import mutating_policy
from compiler.emit.admission_nodes import TOLERATES, claims_devices
from compiler.emit.manifest import Manifest
from compiler.ir import ResolvedCluster
from compiler.versions import Feature

POLICY_NAME = "gpufleet-gpu-node-toleration"

_NEEDED = (
    "(request.namespace in variables.tolerations\n"
    "  ? variables.tolerations[request.namespace] : [])\n"
    ".filter(n, !has(object.spec.tolerations) || !object.spec.tolerations.exists(t,\n"
    "  " + TOLERATES.replace("\n", "\n  ") + "))"
)
"""The namespace's node taints that none of the pod's tolerations tolerates yet."""
_MUTATION = (
    "variables.needed.size() == 0 ? [] :\n"
    "(has(object.spec.tolerations) ? []\n"
    '  : [JSONPatch{op: "add", path: "/spec/tolerations", value: []}])\n'
    "+ variables.needed.map(n, JSONPatch{\n"
    '  op: "add",\n'
    '  path: "/spec/tolerations/-",\n'
    "  value: Object.spec.tolerations{\n"
    '    key: n.key, operator: "Equal", value: n.value, effect: n.effect\n'
    "  }\n"
    "})"
)


def gpu_node_toleration(cluster: ResolvedCluster) -> list[Manifest]:
    """The toleration policy and its binding; none where no namespace's pods may tolerate a
    node taint or the cluster does not serve MutatingAdmissionPolicy."""
    if not cluster.serves(Feature.MUTATING_ADMISSION_POLICY):
        return []
    allowed = cluster.namespace_node_taints
    if not allowed:
        return []
    tolerations = {namespace: [t.fields() for t in taints] for namespace, taints in allowed.items()}
    origins = sorted({team.grant.source.origin for team in cluster.teams})
    sources = ", ".join(
        [f"{cluster.cluster.source.origin}#spec.nodePools", *(f"{o}#quotas" for o in origins)]
    )
    values = {
        "match_conditions": [
            ("claims-devices", claims_devices(list(cluster.dra_extended_resources)))
        ],
        "variables": [("tolerations", cel_literal(tolerations)), ("needed", _NEEDED)],
        "patch_type": "JSONPatch",
        "mutations": [_MUTATION],
    }
    namespaces = ", ".join(f"{o}#namespaces" for o in origins)
    return mutating_policy(cluster, POLICY_NAME, values, sources, namespaces)
