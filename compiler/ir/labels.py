"""The labels gpufleet puts on what it emits, for selectors and admission rules to match."""

TEAM_LABEL = "gpufleet.dev/team"
"""On a team's namespaces and the objects made for it: which team it belongs to."""
TIER_LABEL = "gpufleet.dev/tier"
"""On the claims and workloads made for one tier: which tier they draw from."""
