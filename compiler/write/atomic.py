"""Swap two directories atomically (Linux renameat2 RENAME_EXCHANGE), with a safe fallback;
replace one file atomically."""

from __future__ import annotations

import ctypes
import os
import shutil
from functools import cache
from pathlib import Path

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def replace_file(target: Path, text: str, role: str) -> None:
    """Write `text` to `target` so that a crash leaves the old file or the new, never half:
    written and synced beside it (`.NAME.<role>`), then renamed over it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.with_name(f".{target.name}.{role}")
    with staging.open("w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(staging, target)


def beside(out: Path, role: str) -> Path:
    """The path gpufleet keeps beside the output directory for `role` (`staging`,
    `retired`, `lock`): `.out.staging` for `out`. Never inside out/, whose bytes are the
    compile's alone."""
    out = out.absolute()
    return out.with_name(f".{out.name or 'root'}.{role}")


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


def replace_directory(staging: Path, target: Path, retired: Path) -> Path | None:
    """Make `staging` the new `target`; returns where the old target now is (to remove), or
    None if there was none.

    With RENAME_EXCHANGE, readers see the old tree or the new one, never neither, and the old
    tree ends up at `staging`. Without it, two renames leave a short window in which `target`
    is missing and `retired` holds it; `recover` puts it back (at once if the second rename
    fails, on the next run if the process was killed).
    """
    if target.exists():
        if exchange(staging, target):
            return staging
        target.rename(retired)
        try:
            staging.rename(target)
        except BaseException:
            recover(target, retired)
            raise
        return retired
    staging.rename(target)
    return None


def needs_recovery(target: Path, retired: Path) -> bool:
    """Whether an interrupted fallback swap left `target` missing and set aside at `retired`."""
    missing = not (target.exists() or target.is_symlink())
    return missing and retired.is_dir() and not retired.is_symlink()


def recover(target: Path, retired: Path) -> None:
    """Undo an interrupted fallback swap: restore `retired` when `target` is missing."""
    if needs_recovery(target, retired):
        retired.rename(target)


def remove(path: Path) -> None:
    """Remove `path`, a file, link or directory tree gpufleet left beside out/ (never
    following a link), even where it holds read-only directories (an old out/ that was
    read-only, moved aside).
    """
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        try:
            shutil.rmtree(path)
        except PermissionError:
            _make_removable(str(path))
            shutil.rmtree(path)


def _make_removable(directory: str) -> None:
    os.chmod(directory, 0o700)
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                _make_removable(entry.path)
