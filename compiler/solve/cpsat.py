"""OR-Tools' CP-SAT Python API (`cp_model`), the one place the solver stage imports it from,
imported without pandas.

`ortools.sat.python.cp_model` imports pandas only for its pandas-indexed variable sets
(`new_int_var_series` and the like), which gpufleet never uses; without it, fleet L's
compile peaks at 183 MiB instead of 217 MiB and uses a tenth less CPU (docs/benchmarks.md,
Speed tricks).
While cp_model is imported, a stand-in module answers for pandas with the only two names
cp_model reads from it, `Index` and `Series` (type annotations and isinstance checks), as
classes nothing is an instance of. The stand-in is removed right after, so a later
`import pandas` anywhere gets the real one; if pandas is already imported, cp_model uses it.

cp_model also imports numpy, whose OpenBLAS would start a thread per core; gpufleet makes no
BLAS call, so it is told to start one before the first import. The import happens at the first
use (compiler.solve.lazy says why).
"""

from __future__ import annotations

import os
import sys
import types
from typing import TYPE_CHECKING

from compiler.solve.lazy import LazyModule

__all__ = ["cp_model"]


class _NotPandas:
    """A pandas type no value passed to the solver is an instance of."""


def _import_cp_model() -> types.ModuleType:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if "pandas" in sys.modules:
        from ortools.sat.python import cp_model as imported

        return imported
    stand_in = types.ModuleType("pandas", "stand-in for pandas while cp_model is imported")
    stand_in.Index = stand_in.Series = _NotPandas  # type: ignore[attr-defined]
    sys.modules["pandas"] = stand_in
    try:
        from ortools.sat.python import cp_model as imported
    finally:
        if sys.modules.get("pandas") is stand_in:
            del sys.modules["pandas"]
    return imported


if TYPE_CHECKING:
    from ortools.sat.python import cp_model
else:
    cp_model = LazyModule(_import_cp_model)
