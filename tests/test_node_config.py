"""Node configuration: mig-parted configs the MIG manager accepts, labels for every node, and
plans that keep nodes' MIG layouts when the policy changes elsewhere."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import yaml

from compiler.catalog import enumerate_layouts, load_catalog
from compiler.pipeline import Compiled, compile_policies

LABEL_VALUE = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")


def mig_parted(compiled: Compiled, cluster: str) -> dict:  # type: ignore[type-arg]
    configmap = yaml.safe_load(
        compiled.tree[f"clusters/{cluster}/node-config/configmap_gpufleet-mig-parted-config.yaml"]
    )
    return yaml.safe_load(configmap["data"]["config.yaml"])  # type: ignore[no-any-return]


def node_labels(compiled: Compiled, cluster: str) -> dict[str, str]:
    text = compiled.tree[f"clusters/{cluster}/node-config/nodelabels_mig-config.yaml"]
    return yaml.safe_load(text)["nodes"]  # type: ignore[no-any-return]


def test_mig_parted_configs_are_valid_layouts(compiled_example: Compiled) -> None:
    catalog = load_catalog()
    valid = {
        tuple(sorted(layout.counts))
        for m in ("H100-80GB", "A100-80GB")
        for layout in enumerate_layouts(catalog.lookup(m))
    }  # type: ignore[arg-type]
    for cluster in ("prod-east", "prod-west"):
        config = mig_parted(compiled_example, cluster)
        assert config["version"] == "v1"
        for name, entries in config["mig-configs"].items():
            assert LABEL_VALUE.match(name), name
            for entry in entries:
                assert set(entry) <= {"device-filter", "devices", "mig-enabled", "mig-devices"}
                assert entry["devices"] == "all" or all(0 <= i < 8 for i in entry["devices"])
                assert isinstance(entry["mig-enabled"], bool)
                assert ("mig-devices" in entry) == entry["mig-enabled"]
                if entry["mig-enabled"]:
                    assert tuple(sorted(entry["mig-devices"].items())) in valid


def test_every_mig_capable_node_gets_a_known_config(compiled_example: Compiled) -> None:
    labels = node_labels(compiled_example, "prod-east")
    assert len(labels) == 16  # the h100 pool; h200 and l40s do not allow MIG
    assert set(labels.values()) <= set(mig_parted(compiled_example, "prod-east")["mig-configs"])
    counts = Counter(labels.values())
    assert set(counts) == {"all-disabled", "all-2x3g.40gb"}
    assert counts["all-2x3g.40gb"] * 16 >= 52  # llm-serving's 52 slices of 3g.40gb


def mig_nodes(compiled: Compiled) -> set[str]:
    return {n for n, label in node_labels(compiled, "prod-east").items() if label != "all-disabled"}


def _edit(policies: Path, relative: str, old: str, new: str) -> None:
    path = policies / relative
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_unrelated_change_keeps_every_node_layout(policy_copy: Path) -> None:
    before = compile_policies(policy_copy)
    _edit(policy_copy, "grants/data-science.yaml", "guaranteed: 16", "guaranteed: 8")
    after = compile_policies(policy_copy, previous={p.cluster: p.steering for p in before.plans})
    assert [p.changed_nodes for p in after.plans] == [(), ()]
    assert node_labels(after, "prod-east") == node_labels(before, "prod-east")


def test_growing_mig_demand_changes_the_fewest_nodes(policy_copy: Path) -> None:
    before = compile_policies(policy_copy)
    mig_before = mig_nodes(before)
    _edit(policy_copy, "grants/llm-serving.yaml", "guaranteed: 52", "guaranteed: 68")
    _edit(policy_copy, "teams/llm-serving.yaml", "guaranteed: 48", "guaranteed: 64")
    after = compile_policies(policy_copy, previous={p.cluster: p.steering for p in before.plans})
    mig_after = mig_nodes(after)
    east = next(p for p in after.plans if p.cluster == "prod-east")
    assert mig_before < mig_after  # 68 slices of 3g.40gb need a fifth node; the four stay
    assert set(east.changed_nodes) == mig_after - mig_before
    assert len(east.changed_nodes) == 1


def test_shrinking_mig_demand_drains_nothing(policy_copy: Path) -> None:
    """Fewest changes first: spare MIG nodes stay as they are rather than being drained."""
    before = compile_policies(policy_copy)
    _edit(policy_copy, "teams/llm-serving.yaml", "guaranteed: 48", "guaranteed: 32")
    after = compile_policies(policy_copy, previous={p.cluster: p.steering for p in before.plans})
    assert node_labels(after, "prod-east") == node_labels(before, "prod-east")
    assert [p.changed_nodes for p in after.plans] == [(), ()]


def test_without_a_previous_plan_the_baseline_is_all_disabled(policy_copy: Path) -> None:
    compiled = compile_policies(policy_copy)
    east = next(p for p in compiled.plans if p.cluster == "prod-east")
    assert len(east.changed_nodes) == 4
