"""The registry of diagnostic codes: one place, stable numbers, one line of meaning each.

Ranges: GF0xx internal, GF1xx input (exit 2), GF2xx policy semantics (exit 1),
GF3xx device selection (CEL), GF4xx feasibility, GF5xx output, GF6xx warnings about
feature gates and versions, GF7xx admission cost, GF8xx a cluster's live inventory (GF80x
reading a dump, GF81x importing it, GF82x `gpufleet drift`: the cluster differs from the
policy and its plan).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from compiler import PROJECT_URL


class Severity(enum.Enum):
    """How bad a diagnostic is; errors stop the compile, warnings do not."""

    ERROR = "error"
    WARNING = "warning"


EXIT_OK = 0
EXIT_POLICY = 1
EXIT_INPUT = 2
EXIT_INTERNAL = 3

EXIT_CODES: dict[int, str] = {
    EXIT_OK: "success: no error (warnings do not count, unless --strict)",
    EXIT_POLICY: "a policy problem: infeasible, a semantic error, a stale out/, a cluster file "
    "an import would change (--check), a GPU the catalog lacks; with --strict, also any warning",
    EXIT_INPUT: "invalid input or usage: a policy file or cluster dump that does not parse or "
    "validate, a wrong command line",
    EXIT_INTERNAL: "an internal error or a time limit: the solver's, or waiting for out/",
}
"""Every exit code of the command line and what it means (documented in README.md, which a
test holds to this table)."""

DRIFT_EXIT_CODES: dict[int, str] = {
    EXIT_OK: "in sync: the cluster runs what its policy and plan say",
    EXIT_POLICY: "drift that keeps every guarantee (and, as for every command, a policy problem)",
    EXIT_INPUT: "drift that breaks a guarantee: GF827 (and, as for every command, invalid input "
    "or usage)",
    EXIT_INTERNAL: "an internal error or a time limit",
}
"""What `gpufleet drift` exits with: the issue's 0 in sync, 1 drift that keeps every guarantee,
2 drift that breaks one, over the codes above (GF82x findings exit 1, GF827 exits 2); README.md
holds the same table, `gpufleet drift --help` prints it."""

EXIT_STRICT = EXIT_POLICY
"""The exit code of a run that found only warnings under --strict: the same as a policy
problem, since CI treats it as one."""


@dataclass(frozen=True)
class Code:
    """One registered diagnostic code."""

    code: str
    name: str
    severity: Severity
    exit_code: int
    summary: str


def _codes(*entries: Code) -> dict[str, Code]:
    table: dict[str, Code] = {}
    for entry in entries:
        if entry.code in table:
            raise ValueError(f"duplicate diagnostic code {entry.code}")
        table[entry.code] = entry
    return table


E, W = Severity.ERROR, Severity.WARNING

CODES: dict[str, Code] = _codes(
    Code("GF001", "internal-error", E, EXIT_INTERNAL, "gpufleet itself failed; please report it"),
    Code("GF002", "solver-timeout", E, EXIT_INTERNAL, "the solver hit its time limit"),
    Code("GF101", "yaml-syntax", E, EXIT_INPUT, "a policy file is not valid YAML"),
    Code("GF102", "duplicate-key", E, EXIT_INPUT, "a mapping repeats a key"),
    Code("GF103", "yaml-tag", E, EXIT_INPUT, "a YAML tag or anchor feature gpufleet refuses"),
    Code("GF104", "not-a-mapping", E, EXIT_INPUT, "a document is not a mapping"),
    Code("GF105", "unknown-kind", E, EXIT_INPUT, "apiVersion or kind is missing or unknown"),
    Code("GF106", "unknown-field", E, EXIT_INPUT, "a field the policy language does not have"),
    Code("GF107", "invalid-value", E, EXIT_INPUT, "a value of the wrong type or out of range"),
    Code("GF108", "missing-field", E, EXIT_INPUT, "a required field is missing"),
    Code("GF109", "unreadable-file", E, EXIT_INPUT, "a policy file cannot be read as UTF-8"),
    Code("GF110", "no-policies", E, EXIT_INPUT, "no policy files were found"),
    Code("GF111", "empty-file", W, EXIT_OK, "a policy file holds no policy document"),
    Code("GF112", "duplicate-object", E, EXIT_INPUT, "two documents define the same object"),
    Code("GF113", "usage", E, EXIT_INPUT, "the command line is wrong"),
    Code("GF120", "yaml-budget", E, EXIT_INPUT, "a file exceeds a size, depth or node budget"),
    Code("GF121", "output-symlink", E, EXIT_INPUT, "out/ or a path written in it is a symlink"),
    Code("GF122", "policy-outside", E, EXIT_INPUT, "a policy symlink leads out of the policies"),
    Code("GF123", "reserved-namespace", E, EXIT_INPUT, "a team claims a namespace it may not own"),
    Code("GF124", "team-file-mixed", E, EXIT_INPUT, "a Team's file also declares other kinds"),
    Code(
        "GF201", "unknown-gpu-model", E, EXIT_POLICY, "a node pool names a GPU not in the catalog"
    ),
    Code("GF202", "unknown-tier", E, EXIT_POLICY, "a quota names a tier that does not exist"),
    Code("GF203", "unknown-priority", E, EXIT_POLICY, "a team names a priority not on the ladder"),
    Code(
        "GF204",
        "unknown-cluster",
        E,
        EXIT_POLICY,
        "a reference names a cluster that does not exist",
    ),
    Code("GF205", "namespace-conflict", E, EXIT_POLICY, "two teams claim the same namespace"),
    Code(
        "GF206", "limit-below-guarantee", E, EXIT_POLICY, "a quota's limit is below its guarantee"
    ),
    Code(
        "GF207",
        "quota-namespace",
        E,
        EXIT_POLICY,
        "a quota's namespace is missing or not the team's",
    ),
    Code(
        "GF208", "priority-ladder", E, EXIT_POLICY, "the priority ladder is missing or inconsistent"
    ),
    Code("GF209", "mig-profile", E, EXIT_POLICY, "a MIG profile the selected GPUs do not offer"),
    Code("GF210", "mig-unsupported", E, EXIT_POLICY, "MIG asked of a GPU model without MIG"),
    Code("GF211", "unused-tier", W, EXIT_OK, "a tier no team holds a quota for"),
    Code(
        "GF212",
        "duplicate-quota",
        E,
        EXIT_POLICY,
        "a team lists the same tier twice for a namespace",
    ),
    Code("GF213", "gang-multiple", E, EXIT_POLICY, "a guarantee not a whole number of gangs"),
    Code(
        "GF214", "unknown-pool", E, EXIT_POLICY, "a reference names a node pool the cluster lacks"
    ),
    Code("GF215", "no-such-device", E, EXIT_POLICY, "a node or device the pool does not have"),
    Code("GF216", "node-names", E, EXIT_POLICY, "a pool's nodeNames cannot name its nodes"),
    Code("GF217", "untolerated-taint", W, EXIT_OK, "a device taint that no team tolerates"),
    Code("GF218", "beyond-grant", E, EXIT_POLICY, "a team's own file asks more than its grant"),
    Code("GF219", "no-grant", E, EXIT_POLICY, "a team has no grant from the platform"),
    Code(
        "GF220",
        "feature-unavailable",
        E,
        EXIT_POLICY,
        "the policy uses a feature the cluster's Kubernetes version does not have",
    ),
    Code("GF221", "unknown-fallback", E, EXIT_POLICY, "a tier's fallback is not another tier"),
    Code(
        "GF222",
        "fallback-not-in-cluster",
        E,
        EXIT_POLICY,
        "a fallback tier selects no device in a cluster where its tier is used",
    ),
    Code(
        "GF223",
        "time-slice-interval",
        E,
        EXIT_POLICY,
        "timeSliceInterval without TimeSlicing, or on MIG devices (which have none)",
    ),
    Code(
        "GF224",
        "sharing-unsupported",
        E,
        EXIT_POLICY,
        "a shared tier on another driver than NVIDIA's, or over both MIG and whole GPUs",
    ),
    Code(
        "GF225",
        "extended-resource-conflict",
        E,
        EXIT_POLICY,
        "two tiers of a cluster map the same extended resource name",
    ),
    Code(
        "GF226",
        "kubelet-reservation",
        E,
        EXIT_POLICY,
        "kubelet reservations and eviction threshold leave a node nothing allocatable",
    ),
    Code(
        "GF227",
        "kueue-limits",
        E,
        EXIT_POLICY,
        "a team's ClusterQueue would break a Kueue limit (resource groups, flavors)",
    ),
    Code(
        "GF228",
        "grant-split",
        E,
        EXIT_POLICY,
        "a team splits a tier's grant between namespaces without each share",
    ),
    Code(
        "GF229",
        "codeowners",
        E,
        EXIT_POLICY,
        "CODEOWNERS routes a policy file to other reviewers than its owners",
    ),
    Code(
        "GF230",
        "extended-resource-taken",
        E,
        EXIT_POLICY,
        "a tier maps an extended resource name the driver's own DeviceClass already maps",
    ),
    Code(
        "GF235",
        "unpublished-attribute",
        E,
        EXIT_POLICY,
        "a tier matches gangs on an attribute the cluster's DRA driver does not publish",
    ),
    Code(
        "GF236",
        "unknown-topology",
        E,
        EXIT_POLICY,
        "a gang is kept on one NUMA node or PCIe root of a pool whose grouping is unknown",
    ),
    Code(
        "GF237",
        "invalid-topology",
        E,
        EXIT_POLICY,
        "a pool's GPU groups do not divide its GPUs or do not nest",
    ),
    Code(
        "GF238",
        "duplicate-node-name",
        E,
        EXIT_POLICY,
        "two nodes of a cluster have the same name (listed twice, or given by two pools)",
    ),
    Code(
        "GF240",
        "shared-claim-quota",
        E,
        EXIT_POLICY,
        "a shared claim names a tier its namespace holds no quota for, or more devices",
    ),
    Code(
        "GF241",
        "shared-claim-exclusive",
        E,
        EXIT_POLICY,
        "a shared claim of a tier whose devices are not shared (sharing: Exclusive)",
    ),
    Code(
        "GF242",
        "shared-claim-kueue",
        E,
        EXIT_POLICY,
        "a shared claim in a cluster that runs Kueue, which admits no pod naming a claim",
    ),
    Code(
        "GF243",
        "shared-claim-name",
        E,
        EXIT_POLICY,
        "two shared claims of a namespace have the same name",
    ),
    Code(
        "GF250",
        "invalid-gpu-model",
        E,
        EXIT_POLICY,
        "a fleet's GPU model breaks a rule of the catalog (MIG placements, profiles, boards)",
    ),
    Code(
        "GF251",
        "gpu-model-name-taken",
        E,
        EXIT_POLICY,
        "a fleet's GPU model uses a name another model of the catalog already has",
    ),
    Code(
        "GF252",
        "quota-override",
        E,
        EXIT_POLICY,
        "a grant overrides a quota in a tier or cluster it does not grant",
    ),
    Code(
        "GF260",
        "invalid-suppression",
        E,
        EXIT_POLICY,
        "a suppression names an error, an unknown code or team, or a warning that cannot be "
        "silenced",
    ),
    Code("GF261", "unused-suppression", W, EXIT_OK, "a suppression that silenced no warning"),
    Code("GF301", "cel-invalid", E, EXIT_INPUT, "a CEL selector does not compile or type-check"),
    Code(
        "GF302",
        "cel-eval-error",
        E,
        EXIT_POLICY,
        "a CEL selector fails on a device of the inventory",
    ),
    Code("GF303", "tier-matches-nothing", E, EXIT_POLICY, "a tier selects no device of the fleet"),
    Code(
        "GF304",
        "tier-not-in-cluster",
        E,
        EXIT_POLICY,
        "a quota's tier selects no device in its cluster",
    ),
    Code("GF401", "infeasible", E, EXIT_POLICY, "the guarantees cannot all be served at once"),
    Code("GF402", "model-too-large", E, EXIT_INPUT, "a pool's packing needs too many patterns"),
    Code(
        "GF403",
        "gang-exceeds-group",
        E,
        EXIT_POLICY,
        "a gang is bigger than every group of its match attribute (or every node) it may use",
    ),
    Code("GF501", "stale-output", E, EXIT_POLICY, "out/ differs from what the policies compile to"),
    Code("GF502", "write-failed", E, EXIT_INPUT, "the output directory cannot be written"),
    Code(
        "GF503",
        "output-conflict",
        E,
        EXIT_POLICY,
        "a file gpufleet does not own stands where it would write",
    ),
    Code("GF504", "previous-plan-unreadable", W, EXIT_OK, "a previous plan cannot be read"),
    Code("GF505", "invalid-output", E, EXIT_INTERNAL, "an emitted object fails its API's schema"),
    Code("GF506", "output-locked", E, EXIT_INTERNAL, "another gpufleet held out/ too long"),
    Code(
        "GF701",
        "admission-cost",
        E,
        EXIT_POLICY,
        "an admission policy could exceed the API server's CEL cost limits",
    ),
    Code(
        "GF600",
        "feature-gated",
        W,
        EXIT_OK,
        "the policy uses a feature that is off by default in the cluster's Kubernetes version",
    ),
    Code(
        "GF601",
        "fallback-without-quota",
        W,
        EXIT_OK,
        "a fallback left out of a team's claim templates: the namespace holds no quota for it",
    ),
    Code(
        "GF602",
        "kueue-prioritized-list",
        W,
        EXIT_OK,
        "in a Kueue cluster claim templates offer no fallbacks: Kueue admits no alternatives",
    ),
    Code(
        "GF603",
        "kind-not-served",
        W,
        EXIT_OK,
        "an API kind the cluster does not serve is left out of its output",
    ),
    Code(
        "GF608",
        "driver-gate",
        W,
        EXIT_OK,
        "a tier's sharing needs an NVIDIA DRA driver feature gate the cluster does not declare",
    ),
    Code("GF801", "dump-not-objects", E, EXIT_INPUT, "a dump holds no Kubernetes object or List"),
    Code(
        "GF802",
        "dump-invalid-object",
        E,
        EXIT_INPUT,
        "an object of a dump lacks a field or has one of the wrong type",
    ),
    Code(
        "GF803", "dump-skipped-object", W, EXIT_OK, "an object of a dump that import does not read"
    ),
    Code("GF810", "unknown-gpu", E, EXIT_POLICY, "a GPU of the dump matches no catalog model"),
    Code("GF811", "missing-gpu", W, EXIT_OK, "a node publishes fewer GPUs than it has"),
    Code("GF812", "tainted-device", W, EXIT_OK, "a GPU of the dump carries a device taint"),
    Code("GF813", "mixed-node", E, EXIT_POLICY, "a node holds GPUs of more than one model"),
    Code("GF814", "no-gpu-nodes", E, EXIT_INPUT, "a dump holds no node with GPUs to import"),
    Code(
        "GF815",
        "cluster-file",
        E,
        EXIT_INPUT,
        "the cluster's policy file cannot be updated by an import",
    ),
    Code(
        "GF816",
        "pool-not-in-dump",
        W,
        EXIT_OK,
        "a pool of the cluster file has no node in the dump",
    ),
    Code("GF820", "drift-missing-node", E, EXIT_POLICY, "a node of a pool is not in the cluster"),
    Code("GF821", "drift-node-not-ready", E, EXIT_POLICY, "a node of a pool is not Ready"),
    Code(
        "GF822",
        "drift-missing-gpu",
        E,
        EXIT_POLICY,
        "a node publishes fewer GPUs than its pool declares",
    ),
    Code(
        "GF823",
        "drift-extra-device",
        E,
        EXIT_POLICY,
        "a GPU node or GPU the cluster runs that no pool declares",
    ),
    Code(
        "GF824",
        "drift-mig-config",
        E,
        EXIT_POLICY,
        "a node's nvidia.com/mig.config label is not the one the plan gives it",
    ),
    Code(
        "GF825",
        "drift-mig-not-applied",
        E,
        EXIT_POLICY,
        "a node's MIG devices are not the layout its label and the plan say",
    ),
    Code(
        "GF826",
        "drift-device-taint",
        E,
        EXIT_POLICY,
        "a device taint in the cluster that no DeviceTaint of the policy declares",
    ),
    Code(
        "GF827",
        "drift-breaks-guarantee",
        E,
        EXIT_INPUT,
        "with the capacity the cluster has now, the guarantees cannot all be served",
    ),
    Code(
        "GF828",
        "drift-no-plan",
        E,
        EXIT_INPUT,
        "out/ holds no plan of the cluster to compare it with",
    ),
)

UNSUPPRESSIBLE = frozenset({"GF504", "GF261"})
"""Warnings a fleet's suppressions cannot silence: GF504 is about out/, not the policies, and
GF261 is about the suppressions themselves."""


def help_uri(code: str) -> str:
    """The page that explains a code, with a FAIL and a PASS example."""
    return f"{PROJECT_URL}/blob/main/docs/diagnostics/{code}.md"


def suppressible(code: str) -> bool:
    """Whether a fleet may silence this code: registered warnings only, errors never."""
    entry = CODES.get(code)
    return entry is not None and entry.severity is Severity.WARNING and code not in UNSUPPRESSIBLE
