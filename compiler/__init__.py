"""gpufleet: a declarative GitOps policy compiler for shared GPU clusters."""

__version__ = "0.1.0"
