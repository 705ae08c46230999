"""What a registered check of a resolved cluster is: one function, the codes it reports.

Like a yamllint rule: each check is one generator that yields the diagnostics it finds, declared
with `@cluster_check("GFxxx", ...)` beside its code, and its docstring names the pages whose
FAIL and PASS examples it is tested on (docs/diagnostics/GFxxx.md: one source for each
example; tests/test_resolve_checks.py runs them against the check alone). The order the
resolver runs them in is the list in compiler/resolve/checks.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from compiler.diagnostics import CODES, Diagnostic
from compiler.ir import ResolvedCluster

ClusterCheckFunction = Callable[[ResolvedCluster], Iterator[Diagnostic]]
"""A check of one resolved cluster: yields each problem it finds (errors and warnings)."""


@dataclass(frozen=True)
class ClusterCheck:
    """A registered check of one resolved cluster and every code it may yield."""

    codes: tuple[str, ...]
    function: ClusterCheckFunction
    tested_elsewhere: tuple[str, ...] = ()
    """Codes it also yields whose page's example is another check's finding (a page holds one
    FAIL example): its docstring says where its own case of them is tested."""

    @property
    def examples(self) -> tuple[str, ...]:
        """The codes whose page examples this check is tested on."""
        return tuple(code for code in self.codes if code not in self.tested_elsewhere)

    @property
    def name(self) -> str:
        """The check's function name (what a failing test names)."""
        return self.function.__name__

    def __call__(self, cluster: ResolvedCluster) -> Iterator[Diagnostic]:
        """Run the check on `cluster`; a code it did not register is a gpufleet bug."""
        for diagnostic in self.function(cluster):
            if diagnostic.code not in self.codes:
                raise ValueError(f"{self.name} yielded unregistered code {diagnostic.code}")
            yield diagnostic


def cluster_check(
    *codes: str, tested_elsewhere: tuple[str, ...] = ()
) -> Callable[[ClusterCheckFunction], ClusterCheck]:
    """Register a cluster check with the codes it yields (each in the diagnostic registry),
    and those of them whose page examples belong to another check."""
    unknown = [code for code in (*codes, *tested_elsewhere) if code not in CODES]
    if unknown or not codes or not set(tested_elsewhere) < set(codes):
        raise ValueError(f"a check registers known codes and tests one, not {codes}")

    def register(function: ClusterCheckFunction) -> ClusterCheck:
        return ClusterCheck(codes, function, tested_elsewhere)

    return register
