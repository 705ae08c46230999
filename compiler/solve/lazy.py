"""A module imported when one of its attributes is first read.

The solver's libraries, OR-Tools' cp_model and numpy (which cp_model imports too), take 32 MiB
and 75 ms to import. A large fleet is solved in worker processes forked after resolve, so
the process that holds the whole fleet and, later, every emitted file would carry them for
nothing: it imports them only when it solves a cluster itself (a small fleet, `explain`, one
cluster changed). A compile that reuses every cluster never imports them.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any


class LazyModule:
    """Stands for the module `load()` returns, imported at the first attribute read; each
    attribute is then kept here, so later reads cost what a module's do."""

    def __init__(self, load: Callable[[], ModuleType]) -> None:
        self._load = load
        self._module: ModuleType | None = None

    def __getattr__(self, name: str) -> Any:  # only for names not kept yet
        if self._module is None:
            self._module = self._load()
        value = getattr(self._module, name)
        setattr(self, name, value)
        return value
