"""OR-Tools' CP-SAT Python API (`cp_model`), imported without pandas and numpy.

`ortools.sat.python.cp_model` imports pandas for its pandas-indexed variable sets
(`new_int_var_series` and the like) and numpy for numpy integer types in its type unions and
isinstance checks; gpufleet passes neither, and importing both was a third of a small
compile's wall time (pandas 0.25-0.5 s, numpy and its OpenBLAS threads 0.1-0.2 s). While
cp_model is imported, a stand-in module answers for each with only the names cp_model reads
from it, as classes nothing is an instance of. The stand-ins are removed right after, so a
later `import pandas` or `import numpy` anywhere gets the real module; a module already
imported is used as it is.
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING

__all__ = ["cp_model"]

_READ_BY_CP_MODEL = {
    "pandas": ("Index", "Series"),
    "numpy": ("int8", "uint8", "int32", "uint32", "int64", "uint64", "double", "bool_"),
}
"""Every name cp_model (ortools 9.15) takes from pandas and numpy."""


def _stand_in(module: str, names: tuple[str, ...]) -> types.ModuleType:
    stand_in = types.ModuleType(module, f"stand-in for {module} while cp_model is imported")
    for name in names:  # a class of its own per name: nothing passed to the solver is one
        setattr(stand_in, name, type(name, (), {"__module__": stand_in.__name__}))
    return stand_in


def _import_cp_model() -> types.ModuleType:
    stand_ins = {
        module: _stand_in(module, names)
        for module, names in _READ_BY_CP_MODEL.items()
        if module not in sys.modules
    }
    sys.modules.update(stand_ins)
    try:
        from ortools.sat.python import cp_model as imported
    finally:
        for module, stand_in in stand_ins.items():
            if sys.modules.get(module) is stand_in:
                del sys.modules[module]
    return imported


if TYPE_CHECKING:
    from ortools.sat.python import cp_model
else:
    cp_model = _import_cp_model()
