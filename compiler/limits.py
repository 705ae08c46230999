"""The solver's default time limits: the command line's defaults and the solver's.

A leaf module, so that the command line can be built without loading the solver (a
`compile --check` that answers from its compile record never solves).
"""

DEFAULT_TIME_LIMIT = 20.0
"""Seconds per cluster; generous, since real fleets solve in milliseconds."""

DEFAULT_EXPLAIN_TIME_LIMIT = 10.0
"""Seconds per infeasible cluster for its explanation, on top of the solve's own limit."""
