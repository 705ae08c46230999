"""Writing over a previous compile: unchanged files keep their inode, nothing is rewritten
when nothing changed, and the new tree is still swapped in whole."""

from __future__ import annotations

import os
from pathlib import Path

from compiler.pipeline import Compiled
from compiler.write import OWNED_LIST, write_tree


def inodes(root: Path) -> dict[str, tuple[int, int]]:
    """Every file below `root` with its (inode, mtime in ns)."""
    found = {}
    for path in root.rglob("*"):
        if path.is_file():
            status = path.stat()
            found[path.relative_to(root).as_posix()] = (status.st_ino, status.st_mtime_ns)
    return found


def test_an_unchanged_tree_is_not_rewritten(compiled_example: Compiled, tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_tree(out, compiled_example.tree)
    before, directory = inodes(out), os.stat(out).st_ino
    changes = write_tree(out, compiled_example.tree)
    assert not changes.stale
    assert inodes(out) == before
    assert os.stat(out).st_ino == directory  # not even swapped
    assert not list(tmp_path.glob(".out.*"))


def test_unchanged_files_are_linked_and_changed_ones_rewritten(
    compiled_example: Compiled, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    tree = compiled_example.tree
    write_tree(out, tree)
    before = inodes(out)
    edited, dropped = sorted(p for p in tree if p.endswith(".yaml"))[:2]
    new_tree = {path: text for path, text in tree.items() if path != dropped}
    new_tree[edited] = tree[edited] + "# edited\n"
    changes = write_tree(out, new_tree)
    assert (sorted(changes.changed), changes.removed) == ([OWNED_LIST, edited], [dropped])
    after = inodes(out)
    assert (out / edited).read_text() == new_tree[edited]
    assert after[edited][0] != before[edited][0]  # a new file, never the old one edited
    assert not (out / dropped).exists()
    kept = set(new_tree) - {edited}
    assert all(after[p][0] == before[p][0] for p in kept)
    assert all((out / p).stat().st_nlink == 1 for p in kept)  # the old tree's names are gone
    assert {p: (out / p).read_text() for p in new_tree} == new_tree
