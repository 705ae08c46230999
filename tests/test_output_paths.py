"""Paths: nothing is written outside the output directory, whatever out/ holds."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compiler.pipeline import Compiled
from compiler.write import OWNED_LIST, compare_tree, with_listing, write_tree
from compiler.write.writer import directories_of
from tests.conftest import EXAMPLE

Run = Callable[..., tuple[int, str, str]]


def snapshot(root: Path) -> dict[str, bytes | str]:
    """Every entry below `root`: file bytes, or `-> target` for a symlink (never followed)."""
    found: dict[str, bytes | str] = {}
    for directory, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(directory) / name
            key = path.relative_to(root).as_posix()
            if path.is_symlink():
                found[key] = f"-> {os.readlink(path)}"
            elif path.is_file():
                found[key] = path.read_bytes()
    return found


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """A directory outside out/ that must never change."""
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "passwd").write_text("root:x:0:0\n")
    return target


@pytest.mark.parametrize("path", ["../x.yaml", "/etc/x.yaml", "a/../../x.yaml", ""])
def test_a_tree_path_that_leaves_out_is_refused(tmp_path: Path, path: str) -> None:
    with pytest.raises(ValueError, match="outside the output directory"):
        write_tree(tmp_path / "out", {"ok.yaml": "a: 1\n", path: "b: 2\n"})
    assert not (tmp_path / "out").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("link", "kind"),
    [("clusters", "directory"), ("clusters/prod-east", "directory"), ("argocd", "directory")],
)
def test_a_symlinked_directory_where_gpufleet_writes_is_refused(
    run_cli: Run, compiled_example: Compiled, tmp_path: Path, elsewhere: Path, link: str, kind: str
) -> None:
    out = tmp_path / "out"
    write_tree(out, compiled_example.tree)
    before_elsewhere = snapshot(elsewhere)
    shutil.rmtree(out / link)
    (out / link).symlink_to(elsewhere)
    before_out = snapshot(out)
    code, _, err = run_cli("compile", "--policies", EXAMPLE, "--out", out)
    assert code == 2
    assert f"error[GF121]: {out / link} is a symlink where gpufleet writes its own {kind}" in err
    assert snapshot(elsewhere) == before_elsewhere
    assert snapshot(out) == before_out


def test_a_symlinked_file_where_gpufleet_writes_is_refused(
    run_cli: Run, compiled_example: Compiled, tmp_path: Path, elsewhere: Path
) -> None:
    out = tmp_path / "out"
    write_tree(out, compiled_example.tree)
    owned = out / "clusters" / "prod-east" / "kustomization.yaml"
    owned.unlink()
    owned.symlink_to(elsewhere / "passwd")
    code, _, err = run_cli("compile", "--policies", EXAMPLE, "--out", out)
    assert code == 2 and "GF121" in err and "its own file" in err
    assert (elsewhere / "passwd").read_text() == "root:x:0:0\n"
    code, _, err = run_cli("compile", "--policies", EXAMPLE, "--check", "--out", out)
    assert code == 2 and "GF121" in err


def test_an_out_directory_that_is_a_symlink_is_refused(
    run_cli: Run, tmp_path: Path, elsewhere: Path
) -> None:
    out = tmp_path / "out"
    out.symlink_to(elsewhere, target_is_directory=True)
    before = snapshot(elsewhere)
    code, _, err = run_cli("compile", "--policies", EXAMPLE, "--out", out)
    assert code == 2 and "GF121" in err and "the output directory" in err
    assert snapshot(elsewhere) == before
    assert out.is_symlink()


@pytest.mark.parametrize("out", [".", "..", "/"])
def test_an_out_directory_holding_the_working_directory_is_refused(run_cli: Run, out: str) -> None:
    code, _, err = run_cli("compile", "--policies", EXAMPLE, "--out", out)
    assert code == 2 and "GF113" in err and "contains the working directory" in err


def test_the_users_own_symlinks_are_kept_as_links_and_never_followed(
    compiled_example: Compiled, tmp_path: Path, elsewhere: Path
) -> None:
    out = tmp_path / "out"
    write_tree(out, compiled_example.tree)
    (out / "docs").symlink_to(elsewhere, target_is_directory=True)
    (out / "clusters" / "prod-east" / "notes.txt").symlink_to(elsewhere / "passwd")
    (out / "dangling").symlink_to(tmp_path / "nothing-here")
    before = snapshot(elsewhere)
    changes = write_tree(out, compiled_example.tree)
    assert changes.foreign == ["clusters/prod-east/notes.txt", "dangling", "docs"]
    assert os.readlink(out / "docs") == str(elsewhere)
    assert os.readlink(out / "clusters" / "prod-east" / "notes.txt") == str(elsewhere / "passwd")
    assert os.readlink(out / "dangling") == str(tmp_path / "nothing-here")
    assert snapshot(elsewhere) == before


def test_a_planted_ownership_list_cannot_prune_outside_out(
    compiled_example: Compiled, tmp_path: Path, elsewhere: Path
) -> None:
    out = tmp_path / "out"
    write_tree(out, compiled_example.tree)
    (out / "mine.txt").write_text("keep\n")
    listing = out / OWNED_LIST
    victims = ["../elsewhere/passwd", str(elsewhere / "passwd"), "mine.txt/../../elsewhere"]
    listing.write_text(listing.read_text() + "".join(f"{v}\n" for v in victims))
    before = snapshot(elsewhere)
    write_tree(out, compiled_example.tree)
    assert snapshot(elsewhere) == before
    assert (out / "mine.txt").read_text() == "keep\n"


def test_a_fifo_in_out_is_never_read(compiled_example: Compiled, tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_tree(out, compiled_example.tree)
    owned = out / "clusters" / "prod-east" / "kustomization.yaml"
    owned.unlink()
    os.mkfifo(owned)  # reading it would block forever
    assert (
        "clusters/prod-east/kustomization.yaml" in compare_tree(out, compiled_example.tree).changed
    )
    write_tree(out, compiled_example.tree)
    assert owned.is_file()


def test_leftovers_of_a_killed_run_are_cleared_without_following_links(
    compiled_example: Compiled, tmp_path: Path, elsewhere: Path
) -> None:
    out = tmp_path / "out"
    staging, retired = tmp_path / ".out.staging", tmp_path / ".out.retired"
    staging.mkdir()
    (staging / "half-written.yaml").write_text("kind: Na")
    retired.symlink_to(elsewhere, target_is_directory=True)
    before = snapshot(elsewhere)
    write_tree(out, compiled_example.tree)
    assert not staging.exists() and not retired.exists() and not retired.is_symlink()
    assert snapshot(elsewhere) == before
    assert {p: t.encode() for p, t in compiled_example.tree.items()}.items() <= snapshot(
        out
    ).items()


def test_an_interrupted_fallback_swap_is_recovered(
    compiled_example: Compiled, tmp_path: Path
) -> None:
    # Without renameat2, out/ is renamed aside before the new tree moves in: a kill between
    # the two renames leaves only .out.retired, which the next run restores first.
    out = tmp_path / "out"
    write_tree(out, compiled_example.tree)
    (out / "mine.txt").write_text("keep\n")
    out.rename(tmp_path / ".out.retired")
    changes = write_tree(out, compiled_example.tree)
    assert not changes.stale and changes.foreign == ["mine.txt"]
    assert (out / "mine.txt").read_text() == "keep\n"


def test_write_errors_are_diagnostics(run_cli: Run, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory\n")
    code, _, err = run_cli("compile", "--policies", EXAMPLE, "--out", blocker / "out")
    assert code == 2 and "GF502" in err and "Traceback" not in err


@given(
    st.lists(
        st.lists(st.sampled_from(["a", "b", "a-b", "a.b", "c"]), min_size=1, max_size=4).map(
            "/".join
        ),
        max_size=12,
    )
)
def test_the_directories_of_a_tree_are_every_prefix_of_its_paths(paths: list[str]) -> None:
    expected = {
        "/".join(parts[:end])
        for parts in (path.split("/") for path in paths)
        for end in range(1, len(parts))
    }
    assert directories_of(paths) == expected


@pytest.mark.parametrize("holds_it", [False, True])
def test_the_listing_is_the_last_file_written_once(holds_it: bool) -> None:
    """with_listing adds the list of owned files after the tree's files; a tree that holds a
    file of that name gets the listing instead, still once and last."""
    tree = {"b/x.yaml": "x\n", "a.yaml": "a\n"}
    if holds_it:
        tree = {OWNED_LIST: "not the listing\n", **tree}
    full = with_listing(tree)
    assert list(full) == ["b/x.yaml", "a.yaml", OWNED_LIST]
    assert len(full) == 3 and OWNED_LIST in full
    assert full[OWNED_LIST].splitlines()[1:] == sorted(tree)
