"""The admission policies' CEL parsed before any cluster is known, for a warm worker.

Every admission policy's expressions are checked against the API server's cost limits when a
cluster is emitted (compiler.emit.admission_cost), and parsing them (cel-cpp's type check, then
the checked tree decoded in Python: compiler.cel.ast) is most of what a process's first cluster
costs beyond the next ones, some 50 ms; each parse is kept (`parse_checked` is cached). The
expressions are the same in every cluster but for a few variants that depend on what the
cluster grants, so the rule families built from a few sample entitlements write all of them:
a warm worker parses them while the policies load (compiler.per_cluster.warm_up).
tests/test_warm_worker.py holds that the example fleet's clusters then parse nothing new.
"""

from __future__ import annotations

from dataclasses import replace

from compiler.emit.admission import RULE_FAMILIES
from compiler.emit.admission_cost import policy_cost
from compiler.emit.admission_rules import Entitlements

EVERYTHING = Entitlements(
    teams={"ns": "team"},
    tiers={"ns": ["tier"]},
    templates={"ns": ["tier-1"]},
    priorities={"team": ["standard"]},
    tolerate_exists={"team": {"key": [""]}},
    tolerate_equal={"team": {"key": {"value": ["NoSchedule"]}}},
    tolerable={"team": "key=value:NoSchedule"},
    admin_namespaces=["ns"],
    device_plugin_resources=["nvidia.com/gpu"],
    device_plugin_domains=["nvidia.com/"],
    served_by_dra=["example.com/gpu"],
    gpu_runtime_classes=["nvidia"],
    gpu_environment=["NVIDIA_VISIBLE_DEVICES"],
    allowances={"team": ["gpuEnvironment"]},
    gpu_classes={"gpu.nvidia.com": "driver"},
    system_namespaces=["kube-system"],
    deny_unowned_claims=True,
    claim_api="v1",
    node_taints=[{"key": "key", "value": "value", "effect": "NoSchedule", "name": "key"}],
    node_tolerations={"ns": ["key"]},
    gpu_nodes=[{"pool": "pool", "prefix": "node-", "suffix": ""}],
    gpu_node_names={"node-0": "pool"},
    dra_extended_resources=["example.com/gpu"],
)
"""Something in every field: each family writes its policy, in its fullest variant."""

SAMPLES = (
    EVERYTHING,
    replace(EVERYTHING, gpu_node_names={}, dra_extended_resources=[], deny_unowned_claims=False),
    replace(EVERYTHING, gpu_nodes=[], dra_extended_resources=[]),
)
"""EVERYTHING, and the variants of what nodes are named by and whether pods ask for
extended resources."""


def parse_admission_expressions() -> None:
    """Parse every expression the rule families write, as the cost check of a first cluster
    would (their costs on the samples are taken too, and thrown away)."""
    for sample in SAMPLES:
        for family in RULE_FAMILIES:
            rule = family(sample)
            if rule is not None:
                policy_cost(rule)
