"""gpufleet: a declarative GitOps policy compiler for shared GPU clusters."""

__version__ = "0.1.0"

PROJECT_URL = "https://github.com/gpufleet/gpufleet"
"""Where gpufleet lives: its diagnostics link their pages below it (docs/diagnostics/)."""
