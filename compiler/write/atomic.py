"""Swap two directories atomically (Linux renameat2 RENAME_EXCHANGE), with a safe fallback."""

from __future__ import annotations

import ctypes
import os
from functools import cache
from pathlib import Path

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


@cache
def _renameat2() -> object | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)  # the C library the interpreter runs on
        function = libc.renameat2
    except (OSError, AttributeError):
        return None
    function.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    function.restype = ctypes.c_int
    return function


def exchange(first: Path, second: Path) -> bool:
    """Atomically swap two existing directories; False when the platform cannot."""
    function = _renameat2()
    if function is None:
        return False
    result = function(
        _AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE
    )  # type: ignore[operator]
    return bool(result == 0)


def replace_directory(staging: Path, target: Path, retired: Path) -> None:
    """Make `staging` the new `target`; the old target ends up at `retired` (if there was one).

    With RENAME_EXCHANGE, readers see the old tree or the new one, never neither. Without it,
    two renames leave a short window in which `target` is missing and `retired` holds it;
    `recover` puts it back on the next run.
    """
    if target.exists():
        if exchange(staging, target):
            staging.rename(retired)
            return
        target.rename(retired)
    staging.rename(target)


def recover(target: Path, retired: Path) -> None:
    """Undo an interrupted fallback swap: restore `retired` when `target` is missing."""
    missing = not (target.exists() or target.is_symlink())
    if missing and retired.is_dir() and not retired.is_symlink():
        retired.rename(target)
