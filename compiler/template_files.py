"""Where the output templates are: a leaf, so that the compile cache can hash them without
loading the emitters."""

from __future__ import annotations

from pathlib import Path


def templates_dir() -> Path:
    """The templates: packaged beside the code in a wheel, at the repository root otherwise."""
    packaged = Path(__file__).resolve().parent / "templates"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "templates"
