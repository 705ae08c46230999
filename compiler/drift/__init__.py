"""Drift: what a cluster runs (a dump) against what its policy and committed plan say, and
whether the guarantees still hold on the capacity it has now (`gpufleet drift`)."""

from compiler.drift.compare import Drift, compare
from compiler.drift.findings import Finding, LiveTaint

__all__ = ["Drift", "Finding", "LiveTaint", "compare"]
