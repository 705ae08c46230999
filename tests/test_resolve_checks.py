"""Every registered check of resolve, run alone on its codes' documented examples.

The examples are the FAIL and PASS sections of docs/diagnostics/GFxxx.md (one source for each
example, also run through the command line by test_diagnostic_docs.py). Here each example's
fleet is resolved without any registered check, and the one check then runs on it (on every
cluster, or on the fleet): on the FAIL fleet it must yield its code, on the PASS fleet not, and
on neither a code the example's transcript does not show (a fleet on an old Kubernetes version
shows several warnings of one check, and test_diagnostic_docs.py holds the transcripts to what
the compiler prints).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import cast

import pytest

from compiler.catalog import load_catalog
from compiler.diagnostics import Diagnostic
from compiler.ir import ResolvedCluster
from compiler.load import load_policies
from compiler.model import build_policies
from compiler.resolve import resolve
from compiler.resolve.check import Check, FleetFacts
from compiler.resolve.checks import NO_CHECKS, REGISTERED
from compiler.resolve.taints import check_taint_clusters
from tests.diagnostic_docs import DOCS, Block, Example, base_files, read_page

AnyCheck = Check[ResolvedCluster] | Check[FleetFacts]
CASES = [(check, code) for check in REGISTERED.every for code in check.examples]


def _codes_found(check: AnyCheck, example: Example, root: Path) -> list[str]:
    """The codes `check` yields on the example's fleet, resolved without any registered check."""
    files = dict(base_files())
    files.update({b.file: b.body for b in example.blocks if b.file})
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    policies = build_policies(load_policies(root / "policies"))
    fleet = resolve(policies, load_catalog(), checks=NO_CHECKS)
    if check in REGISTERED.fleet:
        found = cast(Check[FleetFacts], check)(FleetFacts(policies, fleet.teams, fleet.clusters))
        return [d.code for d in found]
    on_cluster = cast(Check[ResolvedCluster], check)
    return [d.code for cluster in fleet.clusters for d in on_cluster(cluster)]


def _shown(example: Example) -> set[str]:
    """The codes an example's console transcript shows."""
    return {
        code
        for block in example.blocks
        if block.is_console
        for code in re.findall(r"\[(GF\d+)\]", block.body)
    }


@pytest.mark.parametrize(("check", "code"), CASES, ids=[f"{c.name}-{code}" for c, code in CASES])
def test_a_check_yields_its_code_on_the_fail_example_and_not_on_the_pass(
    check: AnyCheck, code: str, tmp_path: Path
) -> None:
    examples = {e.kind: e for e in read_page(DOCS / f"{code}.md").examples}
    assert set(examples) == {"FAIL", "PASS"}, f"{code} has no FAIL and PASS examples"
    failing = _codes_found(check, examples["FAIL"], tmp_path / "fail")
    assert code in failing, (check.name, code, failing)
    assert set(failing) <= _shown(examples["FAIL"]), (check.name, code, failing)
    passing = _codes_found(check, examples["PASS"], tmp_path / "pass")
    assert code not in passing, (check.name, code, passing)
    assert set(passing) <= _shown(examples["PASS"]), (check.name, code, passing)


@pytest.mark.parametrize("check", REGISTERED.every, ids=[c.name for c in REGISTERED.every])
def test_a_check_names_the_pages_of_its_examples(check: AnyCheck) -> None:
    doc = check.function.__doc__ or ""
    if check.tested_elsewhere:
        assert "tests/test_" in doc, f"{check.name}: say where its own cases are tested"
    if not check.examples:
        return
    named = re.search(r"Examples \(FAIL and PASS\): docs/diagnostics/((?:GF\d+\.md(?:, )?)+)", doc)
    assert named, f"{check.name}: its docstring names no example pages"
    assert re.findall(r"GF\d+\.md", named.group(1)) == [f"{c}.md" for c in check.examples]


GRANT_EXAMPLES = {"GF206", "GF252"}
"""Codes whose page example is found while resolve merges a grant with its team's file
(resolve/grants.py: building the teams, not a check of them)."""


def test_every_code_a_check_leaves_to_another_is_tested_on_that_one() -> None:
    tested = {code for check in REGISTERED.every for code in check.examples}
    elsewhere = {code for check in REGISTERED.every for code in check.tested_elsewhere}
    assert elsewhere - tested == GRANT_EXAMPLES, elsewhere - tested


TAINT = """apiVersion: gpufleet.dev/v1alpha1
kind: DeviceTaint
metadata: {name: ecc}
spec: {cluster: CLUSTER, pool: h100, node: 1, device: 3, key: example.com/ecc, effect: NoSchedule}
"""


@pytest.mark.parametrize(("cluster", "codes"), [("c9", ["GF204"]), ("c1", [])])
def test_a_taint_naming_an_unknown_cluster_is_refused(
    cluster: str, codes: list[str], tmp_path: Path
) -> None:
    taint = Block("yaml file=policies/taint.yaml", TAINT.replace("CLUSTER", cluster), 0, 0)
    assert _codes_found(check_taint_clusters, Example("FAIL", [taint]), tmp_path) == codes


def test_a_check_may_yield_only_the_codes_it_registers() -> None:
    lying = Check[ResolvedCluster](("GF226",), lambda _: iter([Diagnostic("GF227", "a finding")]))
    with pytest.raises(ValueError, match="unregistered code GF227"):
        list(lying(cast(ResolvedCluster, None)))  # the lying check never looks at it
