"""Every registered check of a resolved cluster, run alone on its codes' documented examples.

The examples are the FAIL and PASS sections of docs/diagnostics/GFxxx.md (one source for each
example, also run through the command line by test_diagnostic_docs.py). Here each example's
fleet is resolved without the registered checks, and the one check then runs on every cluster:
on the FAIL fleet it must yield its code, on the PASS fleet not, and on neither a code the
example's transcript does not show (a fleet on an old Kubernetes version shows several warnings
of one check, and test_diagnostic_docs.py holds the transcripts to what the compiler prints).
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
from compiler.resolve.check import ClusterCheck
from compiler.resolve.checks import CLUSTER_CHECKS
from tests.diagnostic_docs import DOCS, Example, base_files, read_page

CASES = [(check, code) for check in CLUSTER_CHECKS for code in check.examples]


def _codes_found(check: ClusterCheck, example: Example, root: Path) -> list[str]:
    """The codes `check` yields on the example's fleet, resolved without any registered check."""
    files = dict(base_files())
    files.update({b.file: b.body for b in example.blocks if b.file})
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    fleet = resolve(build_policies(load_policies(root / "policies")), load_catalog(), checks=())
    return [d.code for cluster in fleet.clusters for d in check(cluster)]


@pytest.mark.parametrize(("check", "code"), CASES, ids=[f"{c.name}-{code}" for c, code in CASES])
def test_a_check_yields_its_code_on_the_fail_example_and_nothing_on_the_pass(
    check: ClusterCheck, code: str, tmp_path: Path
) -> None:
    examples = {e.kind: e for e in read_page(DOCS / f"{code}.md").examples}
    assert set(examples) == {"FAIL", "PASS"}, f"{code} has no FAIL and PASS examples"
    failing = _codes_found(check, examples["FAIL"], tmp_path / "fail")
    assert code in failing, (check.name, code, failing)
    assert set(failing) <= _shown(examples["FAIL"]), (check.name, code, failing)
    passing = _codes_found(check, examples["PASS"], tmp_path / "pass")
    assert code not in passing, (check.name, code, passing)
    assert set(passing) <= _shown(examples["PASS"]), (check.name, code, passing)


def _shown(example: Example) -> set[str]:
    """The codes an example's console transcript shows."""
    return {
        code
        for block in example.blocks
        if block.is_console
        for code in re.findall(r"\[(GF\d+)\]", block.body)
    }


@pytest.mark.parametrize("check", CLUSTER_CHECKS, ids=[c.name for c in CLUSTER_CHECKS])
def test_a_check_names_the_pages_of_its_examples(check: ClusterCheck) -> None:
    doc = check.function.__doc__ or ""
    named = re.search(r"Examples \(FAIL and PASS\): docs/diagnostics/((?:GF\d+\.md(?:, )?)+)", doc)
    assert named, f"{check.name}: its docstring names no example pages"
    assert re.findall(r"GF\d+\.md", named.group(1)) == [f"{c}.md" for c in check.examples]


def test_a_check_may_yield_only_the_codes_it_registers() -> None:
    lying = ClusterCheck(("GF226",), lambda cluster: iter([Diagnostic("GF227", "a finding")]))
    with pytest.raises(ValueError, match="unregistered code GF227"):
        list(lying(cast(ResolvedCluster, None)))  # the lying check never looks at it
