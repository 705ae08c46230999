"""OR-Tools' CP-SAT Python API (`cp_model`), the one place the solver stage imports it from.

cp_model imports numpy, whose OpenBLAS would start a thread per core; gpufleet makes no BLAS
call, so it is told to start one before the first import.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from ortools.sat.python import cp_model

__all__ = ["cp_model"]
