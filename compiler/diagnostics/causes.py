"""The order diagnostics print in: causes before the consequences they bring about.

One broken clause brings findings about other clauses: a pool of an unknown GPU (GF201) leaves
a tier selecting nothing (GF303), which leaves each quota of that tier without devices (GF304),
which leaves a shared claim of it outside its namespace's quota (GF240). Sorted by file alone,
the consequences in teams/ would print before their cause in tiers/, and a reader would fix
the symptoms first. So each code sits in a layer of the policy its findings are about, and
the layers follow the direction in which findings bring one another about: the files, what
the platform defines without naming anything else (clusters and their pools, the ladder),
tiers (whose selectors read the pools), what grants name (tiers, priorities, clusters,
namespaces), how teams use what they were granted, whether the guarantees fit, and output.
A finding never causes one in an earlier layer. Within a layer, diagnostics sort by file and
position (`Diagnostic.sort_key`).

A code is placed by its range (GF1xx input, GF2xx references, GF3xx tiers, ...) unless
OVERRIDES places it elsewhere: the ranges number codes by topic, not all by cause.
"""

from __future__ import annotations

LAYERS: tuple[tuple[str, str], ...] = (
    ("input", "the files: YAML, fields and values"),
    ("platform", "clusters, node pools, the priority ladder, suppressions"),
    ("tiers", "tiers and the devices their selectors choose"),
    ("references", "what grants and teams name: tiers, priorities, clusters, namespaces"),
    ("quotas", "how teams use their grants: own quotas, shared claims, fallbacks, queues"),
    ("feasibility", "whether every guarantee fits at once"),
    ("output", "what is emitted and written"),
)
"""The causal layers, earliest first: (name, what its findings are about)."""

_BY_RANGE = {
    "GF0": "feasibility",
    "GF1": "input",
    "GF2": "references",
    "GF3": "tiers",
    "GF4": "feasibility",
    "GF5": "output",
    "GF6": "quotas",
    "GF7": "output",
    "GF8": "input",
}
"""The layer of a code by its hundred (GF6xx: warnings about what a usage needs)."""

_PLACED = {
    "platform": (
        *("GF201", "GF208", "GF216", "GF226", "GF237", "GF260"),
        *("GF810", "GF811", "GF812", "GF813", "GF814", "GF815", "GF816"),
        *("GF820", "GF821", "GF822", "GF823", "GF824", "GF825", "GF826"),
    ),
    "tiers": ("GF209", "GF210", "GF221", "GF223", "GF224", "GF225", "GF230", "GF235", "GF236"),
    "references": ("GF304",),
    "quotas": (
        *("GF211", "GF217", "GF218", "GF222", "GF227", "GF228"),
        *("GF240", "GF241", "GF242", "GF243", "GF261"),
    ),
    "feasibility": ("GF827",),
    "output": ("GF229",),
}
OVERRIDES = {code: layer for layer, codes in _PLACED.items() for code in codes}
"""Codes whose range is not their layer."""

_INDEX = {name: index for index, (name, _) in enumerate(LAYERS)}


def causal_layer(code: str) -> int:
    """The index in LAYERS of the layer a code's findings belong to (sorted on first)."""
    return _INDEX[OVERRIDES.get(code) or _BY_RANGE.get(code[:3], "output")]
