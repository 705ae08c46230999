"""What a registered check is: one function, the codes it reports, the examples it is tested on.

Like a yamllint rule: each check is one generator that yields the diagnostics it finds, declared
beside its code with the codes it yields: `@cluster_check(...)` for a check of one resolved
cluster, `@fleet_check(...)` for one that needs the whole fleet. Its docstring names the pages
whose FAIL and PASS examples it is tested on (docs/diagnostics/GFxxx.md: one source for each
example; tests/test_resolve_checks.py runs them against the check alone). The order the
resolver runs them in is the registry in compiler/resolve/checks.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from compiler.diagnostics import CODES, Diagnostic
from compiler.ir import GrantedTeam, ResolvedCluster
from compiler.model import Policies


@dataclass(frozen=True)
class FleetFacts:
    """What a fleet-wide check sees: the policies, the granted teams and every resolved
    cluster."""

    policies: Policies
    teams: tuple[GrantedTeam, ...]
    clusters: tuple[ResolvedCluster, ...]


Subject = TypeVar("Subject", ResolvedCluster, FleetFacts)
"""What a check looks at: one resolved cluster, or the whole fleet."""


@dataclass(frozen=True)
class Check(Generic[Subject]):
    """A registered check and every code it may yield."""

    codes: tuple[str, ...]
    function: Callable[[Subject], Iterator[Diagnostic]]
    tested_elsewhere: tuple[str, ...] = ()
    """Codes it yields whose page's example is another check's finding (a page holds one FAIL
    example): its docstring says where its own case of them is tested."""

    @property
    def name(self) -> str:
        """The check's function name (what a failing test names)."""
        return self.function.__name__

    @property
    def examples(self) -> tuple[str, ...]:
        """The codes whose page examples this check is tested on."""
        return tuple(code for code in self.codes if code not in self.tested_elsewhere)

    def __call__(self, subject: Subject) -> Iterator[Diagnostic]:
        """Run the check on `subject`; a code it did not register is a gpufleet bug."""
        for diagnostic in self.function(subject):
            if diagnostic.code not in self.codes:
                raise ValueError(f"{self.name} yielded unregistered code {diagnostic.code}")
            yield diagnostic


def _registrar(
    codes: tuple[str, ...], tested_elsewhere: tuple[str, ...]
) -> Callable[[Callable[[Subject], Iterator[Diagnostic]]], Check[Subject]]:
    unknown = [code for code in (*codes, *tested_elsewhere) if code not in CODES]
    if unknown or not codes or not set(tested_elsewhere) <= set(codes):
        raise ValueError(f"a check registers known codes and tests one, not {codes}")

    def register(function: Callable[[Subject], Iterator[Diagnostic]]) -> Check[Subject]:
        return Check(codes, function, tested_elsewhere)

    return register


def cluster_check(
    *codes: str, tested_elsewhere: tuple[str, ...] = ()
) -> Callable[[Callable[[ResolvedCluster], Iterator[Diagnostic]]], Check[ResolvedCluster]]:
    """Register a check of one resolved cluster with the codes it yields (each in the
    diagnostic registry), and those of them whose page examples belong to another check."""
    return _registrar(codes, tested_elsewhere)


def fleet_check(
    *codes: str, tested_elsewhere: tuple[str, ...] = ()
) -> Callable[[Callable[[FleetFacts], Iterator[Diagnostic]]], Check[FleetFacts]]:
    """Register a check of the whole fleet with the codes it yields (each in the diagnostic
    registry), and those of them whose page examples belong to another check."""
    return _registrar(codes, tested_elsewhere)
