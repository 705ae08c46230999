"""What a campaign found: counts, histograms, extremes, and every failing case."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tests.fuzz.harness import KINDS, Verdict
from tests.fuzz.mutations import Case
from tests.fuzz.runner import Finished


@dataclass(frozen=True)
class Result:
    """One judged case, and where it was saved if it failed."""

    case: Case
    finished: Finished
    verdict: Verdict
    saved: Path | None

    def reproducer(self) -> str:
        """How to run this case again."""
        case = self.case
        lines = [
            f"seed {case.seed!r} case {case.index} (base {case.base}): "
            + "; ".join(str(p) for p in self.verdict.problems),
            *(f"    {m}" for m in case.mutations),
        ]
        if self.saved:
            lines.append(f"    replay: .venv/bin/python -m tests.fuzz replay {self.saved}")
        lines.append(
            f"    redraw: make fuzz FUZZ_SEED='{case.seed}' FUZZ_FIRST={case.index} FUZZ_CASES=1"
        )
        return "\n".join(lines)


@dataclass
class Summary:
    """Running totals of a campaign."""

    seed: str
    bases: list[str]
    dropped: list[str]
    save: Path
    cases: int = 0
    exits: Counter[str] = field(default_factory=Counter)
    codes: Counter[str] = field(default_factory=Counter)
    """Cases in which each error code was reported."""
    mutations: Counter[str] = field(default_factory=Counter)
    passed: Counter[str] = field(default_factory=Counter)
    """Cases of each mutation that got past the input checks (exit 0 or 1)."""
    by_base: Counter[str] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)
    """Cases with a problem of each kind."""
    failures: list[Result] = field(default_factory=list)
    fuzzer_errors: list[str] = field(default_factory=list)
    """Cases the fuzzer itself failed to draw (a bug in a mutation), with its traceback."""
    times: list[float] = field(default_factory=list)
    cpu: float = 0.0
    """CPU seconds of the cases (their workers included)."""
    max_rss: int = 0
    slowest: str = ""
    seconds: float = 0.0

    def add(self, result: Result) -> None:
        """Count one judged case."""
        finished = result.finished
        self.cases += 1
        self.exits["hang" if finished.timed_out else str(finished.status)] += 1
        self.codes.update(result.verdict.codes)
        names = {m.split(":", 1)[0] for m in result.case.mutations}
        self.mutations.update(names)
        if finished.status in (0, 1) and not finished.timed_out:
            self.passed.update(names)
        self.by_base[result.case.base] += 1
        self.kinds.update({p.kind for p in result.verdict.problems})
        if result.verdict.problems:
            self.failures.append(result)
        if not self.times or finished.seconds > max(self.times):
            self.slowest = f"case {result.case.index} ({result.case.base})"
        self.times.append(finished.seconds)
        self.cpu += finished.cpu
        self.max_rss = max(self.max_rss, finished.max_rss)

    def percentile(self, share: float) -> float:
        """The case time below which `share` of the cases ran."""
        ordered = sorted(self.times)
        return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0

    def line(self) -> str:
        """One progress line."""
        rate = self.cases / self.seconds if self.seconds else 0.0
        exits = dict(sorted(self.exits.items()))
        return f"{self.cases} cases, {len(self.failures)} failing, exits {exits}" + (
            f", {rate:.1f} cases/s" if rate else ""
        )

    def text(self) -> str:
        """The summary printed at the end of a campaign."""
        histogram = "\n".join(
            f"    {code:<8} {count}" for code, count in sorted(self.codes.items(), key=_by_count)
        )
        mutations = ", ".join(
            f"{m} {n} ({self.passed[m]})" for m, n in sorted(self.mutations.items(), key=_by_count)
        )
        hangs = self.exits.get("hang", 0)
        crashes = self.kinds.get("crash", 0)
        lines = [
            f"fuzz: seed {self.seed!r}, {self.cases} cases in {self.seconds:.0f} s",
            f"  bases: {', '.join(f'{b} {self.by_base[b]}' for b in self.bases)}"
            + (f" (did not compile, dropped: {', '.join(self.dropped)})" if self.dropped else ""),
            f"  exit codes: {', '.join(f'{k}: {v}' for k, v in sorted(self.exits.items()))}",
            f"  hangs: {hangs}, crashes: {crashes}, failing cases: {len(self.failures)}"
            + "".join(f", {k}: {self.kinds[k]}" for k in KINDS if self.kinds.get(k)),
            f"  time per case: median {self.percentile(0.5):.2f} s,"
            f" p99 {self.percentile(0.99):.2f} s,"
            f" max {max(self.times, default=0):.2f} s ({self.slowest}); CPU {self.cpu:.0f} s",
            f"  memory: max RSS {self.max_rss >> 20} MiB",
            "  error codes (cases):",
            histogram or "    none",
            f"  mutations, in cases (of which exit 0 or 1): {mutations}",
        ]
        if self.fuzzer_errors:
            lines.append(f"  cases the fuzzer failed to draw: {len(self.fuzzer_errors)}")
            lines.extend("  " + error.replace("\n", "\n  ") for error in self.fuzzer_errors)
        if self.failures:
            lines.append(f"  failing cases (saved in {self.save}):")
            lines.extend("  " + r.reproducer().replace("\n", "\n  ") for r in self.failures)
        return "\n".join(lines)

    def as_json(self) -> dict[str, object]:
        """The figures, for summary.json."""
        return {
            "seed": self.seed,
            "cases": self.cases,
            "seconds": round(self.seconds, 1),
            "bases": dict(self.by_base),
            "dropped": self.dropped,
            "exits": dict(self.exits),
            "codes": dict(self.codes),
            "mutations": dict(self.mutations),
            "mutations_exit_0_or_1": dict(self.passed),
            "problems": dict(self.kinds),
            "median_seconds": round(self.percentile(0.5), 3),
            "p99_seconds": round(self.percentile(0.99), 3),
            "max_seconds": round(max(self.times, default=0), 3),
            "cpu_seconds": round(self.cpu, 1),
            "max_rss_mib": self.max_rss >> 20,
            "failures": [str(r.saved) for r in self.failures],
            "fuzzer_errors": self.fuzzer_errors,
        }


def _by_count(item: tuple[str, int]) -> tuple[int, str]:
    return (-item[1], item[0])
