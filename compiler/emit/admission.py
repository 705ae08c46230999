"""Admission guardrails: ValidatingAdmissionPolicies, their bindings, priority quotas.

One policy per rule family (admission_claims, admission_workloads) with the cluster's
entitlements baked in; one binding each that selects only the namespaces gpufleet owns (by
the labels it sets on them), except the opt-in policy on namespaces no team owns, which is
bound to every namespace and picks its own by name; and per team namespace a ResourceQuota
that admits no pod of a PriorityClass the team may not use (defence in depth: it holds even
without the policy).
Why baked in rather than `paramKind`: params would live in objects a team could edit in
its own namespace, or need one binding per team; baked-in data needs neither, is one
reviewable line per namespace in a PR diff, and costs the API server one map lookup.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from compiler.catalog.driver import DRIVER_CLASSES
from compiler.diagnostics import fail
from compiler.emit.admission_claims import (
    admin_access,
    device_tolerations,
    tier_entitlement,
    unowned_claims,
)
from compiler.emit.admission_cost import policy_cost
from compiler.emit.admission_nodes import gpu_node_tolerations
from compiler.emit.admission_rules import POD_RULE, Entitlements, PolicyRule, ResourceRule
from compiler.emit.admission_workloads import (
    dra_only,
    gpu_environment,
    priority_entitlement,
    priority_label,
)
from compiler.emit.manifest import MANAGED_BY, SOURCE_ANNOTATION, SYNC_WAVE, Manifest
from compiler.emit.waves import WAVES
from compiler.emit.yaml_safe import block
from compiler.emit.yaml_writer import object_yaml
from compiler.ir import TEAM_LABEL, GrantedTeam, ResolvedCluster
from compiler.ir.claims import claim_template_name, claim_template_sizes
from compiler.ir.policy import Fleet
from compiler.ir.settings import FleetSettings
from compiler.versions import ADMISSION_GROUP, DRA_GROUP

ADMISSION_API = f"{ADMISSION_GROUP}/v1"
RULE_FAMILIES = (
    tier_entitlement,
    priority_entitlement,
    priority_label,
    dra_only,
    gpu_environment,
    device_tolerations,
    admin_access,
    unowned_claims,
    gpu_node_tolerations,
)
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"
"""The NVIDIA device plugin's resource per MIG profile (its `mixed` strategy)."""
WHOLE_DOMAIN = "/*"
"""How a `devicePluginResources` entry names every resource of a domain (`nvidia.com/*`)."""
KUBE_SYSTEM = "kube-system"
NAMESPACE_NAME = "kubernetes.io/metadata.name"
"""The label the API server sets on every namespace to its name."""


def entitlements(cluster: ResolvedCluster, fleet: Fleet | None) -> Entitlements:
    """What the cluster's policy grants each namespace and team."""
    tiers: dict[str, set[str]] = defaultdict(set)
    for guarantee in cluster.guarantees:
        tiers[guarantee.namespace].add(guarantee.tier)
    templates: dict[str, list[str]] = defaultdict(list)
    for guarantee in cluster.guarantees:
        templates[guarantee.namespace] += [
            claim_template_name(guarantee.tier, count) for count in claim_template_sizes(guarantee)
        ]
    settings = FleetSettings(fleet)
    plugin = settings.device_plugin_resources
    domains = sorted({p.removesuffix("*") for p in plugin if p.endswith(WHOLE_DOMAIN)})

    def in_a_domain(name: str) -> bool:
        return any(name.startswith(domain) for domain in domains)

    mig = {
        f"{MIG_RESOURCE_PREFIX}{profile.name}"
        for pool in cluster.pools
        if pool.model.mig is not None and pool.pool.mig != "disabled"
        for profile in pool.model.mig.profiles
    }
    exact = {p for p in plugin if not p.endswith(WHOLE_DOMAIN)} | mig
    served_by_dra = {
        name for t in cluster.tiers if (name := t.tier.spec.extended_resource_name) is not None
    }
    driver_classes = DRIVER_CLASSES.get(cluster.cluster.spec.driver, ())
    return Entitlements(
        teams={ns: team.name for team in cluster.teams for ns in team.spec.namespaces},
        tiers={ns: sorted(names) for ns, names in tiers.items()},
        templates={ns: sorted(names) for ns, names in templates.items()},
        priorities={t.name: sorted(t.spec.priorities) for t in cluster.teams if t.spec.priorities},
        tolerate_exists={t.name: g for t in cluster.teams if (g := _exists_grants(t))},
        tolerate_equal={t.name: q for t in cluster.teams if (q := _equal_grants(t))},
        tolerable={t.name: _in_words(t) for t in cluster.teams if t.spec.tolerations},
        admin_namespaces=sorted(
            ns for team in cluster.teams if team.spec.admin_access for ns in team.spec.namespaces
        ),
        device_plugin_resources=sorted(
            name for name in exact - served_by_dra if not in_a_domain(name)
        ),
        device_plugin_domains=domains,
        served_by_dra=sorted(name for name in served_by_dra if in_a_domain(name)),
        gpu_runtime_classes=sorted(settings.gpu_runtime_classes),
        gpu_environment=sorted(settings.gpu_environment),
        allowances={t.name: a for t in cluster.teams if (a := t.spec.allow.granted())},
        gpu_classes={c: "driver" for c in driver_classes} | {t.name: "tier" for t in cluster.tiers},
        system_namespaces=sorted({*settings.system_namespaces, KUBE_SYSTEM}),
        deny_unowned_claims=settings.deny_unowned_claims,
        claim_api=cluster.target.dra_api.removeprefix(f"{DRA_GROUP}/"),
        node_taints=[{**t.model_dump(), "name": str(t)} for t in cluster.node_taints],
        node_tolerations={
            ns: [str(t) for t in taints] for ns, taints in cluster.namespace_node_taints.items()
        },
        gpu_nodes=[
            {"pool": n.pool, "prefix": n.prefix, "suffix": n.suffix}
            for n in cluster.tainted_node_names
            if n.listed is None
        ],
        gpu_node_names=dict(
            sorted((name, n.pool) for n in cluster.tainted_node_names for name in n.listed or ())
        ),
        dra_extended_resources=list(cluster.dra_extended_resources),
    )


def _exists_grants(team: GrantedTeam) -> dict[str, list[str]]:
    """key -> effects the team may tolerate with any value (operator Exists)."""
    grants: dict[str, set[str]] = defaultdict(set)
    for toleration in team.spec.tolerations:
        if toleration.operator == "Exists":
            grants[toleration.key].add(toleration.effect or "")
    return {key: sorted(effects) for key, effects in grants.items()}


def _equal_grants(team: GrantedTeam) -> dict[str, dict[str, list[str]]]:
    """key -> value -> effects the team may tolerate (operator Equal)."""
    grants: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for toleration in team.spec.tolerations:
        if toleration.operator == "Equal":
            grants[toleration.key][toleration.value or ""].add(toleration.effect or "")
    return {k: {v: sorted(e) for v, e in values.items()} for k, values in grants.items()}


def _in_words(team: GrantedTeam) -> str:
    """The team's tolerations as `key=value:effect`, `*` for any value or effect."""
    return ", ".join(
        sorted(
            f"{t.key}={t.value if t.operator == 'Equal' else '*'}:{t.effect or '*'}"
            for t in team.spec.tolerations
        )
    )


def admission_manifests(cluster: ResolvedCluster, fleet: Fleet | None) -> list[Manifest]:
    """The cluster's validating policies and their bindings."""
    data = entitlements(cluster, fleet)
    origins = sorted({team.grant.source.origin for team in cluster.teams})
    fleet_origins = [fleet.source.origin] if fleet is not None else []
    manifests: list[Manifest] = []
    for family in RULE_FAMILIES:
        rule = family(data)
        if rule is None or (not cluster.teams and not rule.binds_every_namespace):
            continue
        _check_cost(cluster, rule)
        clauses = [_sources(fleet_origins, c) for c in rule.fleet_clauses]
        sources = ", ".join(s for s in (*clauses, _sources(origins, rule.clause)) if s)
        manifests.append(_policy(cluster.name, rule, sources))
        if rule.binds_every_namespace:
            binding = policy_binding(
                cluster.name, rule.name, sources, match_labels={}, required_label=NAMESPACE_NAME
            )
        else:
            binding = policy_binding(cluster.name, rule.name, _sources(origins, "namespaces"))
        manifests.append(binding)
    return manifests


def _sources(origins: list[str], clause: str) -> str:
    """The teams' files, sorted, each with `#clause`."""
    return ", ".join(f"{origin}#{clause}" for origin in origins)


def _check_cost(cluster: ResolvedCluster, rule: PolicyRule) -> None:
    problems = policy_cost(rule).problems()
    if problems:
        raise fail(
            "GF701",
            f"admission policy {rule.name} for cluster {cluster.name!r} could exceed the API "
            f"server's CEL cost limits: {'; '.join(problems)}",
            cluster.cluster.source.span(("metadata", "name")),
            "the cost grows with the namespaces and grants of one cluster (split its teams "
            "over more clusters) and, on pods, with the fleet's devicePluginResources and "
            "gpuEnvironment (name fewer domains and variables)",
        )


def _policy(cluster: str, rule: PolicyRule, sources: str) -> Manifest:
    return Manifest(
        kind="ValidatingAdmissionPolicy",
        name=rule.name,
        builder=_policy_yaml,
        values={"rule": rule},
        cluster=cluster,
        annotations={
            SOURCE_ANNOTATION: sources,
            SYNC_WAVE: str(WAVES["ValidatingAdmissionPolicy"]),
        },
    )


def policy_binding(
    cluster: str,
    policy: str,
    sources: str,
    kind: str = "ValidatingAdmissionPolicyBinding",
    api_version: str = ADMISSION_API,
    match_labels: Mapping[str, str] = MANAGED_BY,
    required_label: str = TEAM_LABEL,
) -> Manifest:
    """The binding of an admission policy (validating or mutating) to the namespaces gpufleet
    manages: those it labels as its own and as a team's (by default). Bound instead to every
    namespace (no labels, `kubernetes.io/metadata.name` required: the API server sets it on
    each, and nobody can forge it), a policy picks its namespaces by name in matchConditions."""
    return Manifest(
        kind=kind,
        name=policy,
        builder=_binding_yaml,
        values={
            "api_version": api_version,
            "policy": policy,
            "match_labels": match_labels,
            "required_label": required_label,
        },
        cluster=cluster,
        annotations={
            SOURCE_ANNOTATION: sources,
            SYNC_WAVE: str(WAVES[kind]),
        },
    )


EXPRESSION_INDENT = 8
"""The column of an expression's lines below `spec.validations[i].expression` (and the
variables' and matchConditions'); a mutation's is one level deeper."""


def _expression(source: str, indent: int = EXPRESSION_INDENT) -> str:
    return block(source, indent, single_line_too=True)


def _policy_yaml(manifest: Manifest) -> str:
    """A ValidatingAdmissionPolicy's YAML: the requests it matches, then its matchConditions,
    variables and validations, each expression a literal block."""
    rule: PolicyRule = manifest.values["rule"]
    spec: dict[str, Any] = {
        "failurePolicy": "Fail",
        "matchConstraints": _match_constraints(rule.rules, rule.operations),
    }
    if rule.match_conditions:
        spec["matchConditions"] = _named_expressions(rule.match_conditions)
    spec["variables"] = _named_expressions(rule.variables)
    spec["validations"] = [
        {
            "expression": _expression(v.expression),
            "messageExpression": _expression(v.message_expression),
            "message": v.message,
            "reason": "Forbidden",
        }
        for v in rule.validations
    ]
    return object_yaml(ADMISSION_API, manifest, {"spec": spec})


def _mutating_policy_yaml(manifest: Manifest) -> str:
    """A MutatingAdmissionPolicy's YAML: the creations it matches, its matchConditions and
    variables, and its mutations, each a JSON patch or an apply configuration."""
    values = manifest.values
    json_patch = values.get("patch_type") == "JSONPatch"
    patch_type, field = (
        ("JSONPatch", "jsonPatch") if json_patch else ("ApplyConfiguration", "applyConfiguration")
    )
    mutations = [
        {"patchType": patch_type, field: {"expression": _expression(source, EXPRESSION_INDENT + 2)}}
        for source in values["mutations"]
    ]
    spec = {
        "failurePolicy": "Fail",
        "reinvocationPolicy": "Never",
        "matchConstraints": _match_constraints(values["rules"], ("CREATE",)),
        "matchConditions": _named_expressions(values["match_conditions"]),
        "variables": _named_expressions(values["variables"]),
        "mutations": mutations,
    }
    return object_yaml(values["api_version"], manifest, {"spec": spec})


def _match_constraints(
    rules: Sequence[ResourceRule], operations: Sequence[str]
) -> dict[str, list[dict[str, Any]]]:
    """A policy's matchConstraints: the operations on each rule's namespaced resources."""
    return {
        "resourceRules": [
            {
                "apiGroups": [group],
                "apiVersions": [version],
                "operations": list(operations),
                "resources": list(resources),
                "scope": "Namespaced",
            }
            for group, version, resources in rules
        ]
    }


def _named_expressions(named: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    """Variables or matchConditions: each name with its expression."""
    return [{"name": name, "expression": _expression(source)} for name, source in named]


def _binding_yaml(manifest: Manifest) -> str:
    """A policy binding's YAML: its policy, Deny for a validating one, and the namespaces it
    selects (by their labels, if any, and one label they must carry)."""
    values = manifest.values
    spec: dict[str, Any] = {"policyName": values["policy"]}
    if manifest.kind == "ValidatingAdmissionPolicyBinding":
        spec["validationActions"] = ["Deny"]
    selector: dict[str, Any] = {}
    if values["match_labels"]:
        selector["matchLabels"] = values["match_labels"]
    selector["matchExpressions"] = [{"key": values["required_label"], "operator": "Exists"}]
    spec["matchResources"] = {"namespaceSelector": selector}
    return object_yaml(values["api_version"], manifest, {"spec": spec})


def mutating_policy(
    cluster: ResolvedCluster,
    name: str,
    values: Mapping[str, object],
    sources: str,
    binding_sources: str,
) -> list[Manifest]:
    """A MutatingAdmissionPolicy on pods (`values`: match_conditions, variables, mutations,
    patch_type) at the version the cluster serves, and its binding to gpufleet's namespaces."""
    api = cluster.target.mutating_policy_api
    policy = Manifest(
        kind="MutatingAdmissionPolicy",
        name=name,
        builder=_mutating_policy_yaml,
        values={"api_version": api, "rules": [POD_RULE], **values},
        cluster=cluster.name,
        annotations={
            SOURCE_ANNOTATION: sources,
            SYNC_WAVE: str(WAVES["MutatingAdmissionPolicy"]),
        },
    )
    kind = "MutatingAdmissionPolicyBinding"
    return [policy, policy_binding(cluster.name, name, binding_sources, kind, api)]
