"""Carrying out/ into staging while the compile runs (compiler.write.prestage) writes exactly
what staging from nothing writes: the same files, bytes, modes, links and directories, the
same changes reported, the same refusals, with unchanged files keeping their inode and the
old tree never written into; also when out/ changes after it was carried. The process that
carries it never leaves anything behind, even when its parent is killed."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler.cache.file_index import FileIndex
from compiler.cli import main
from compiler.diagnostics import CompileError
from compiler.write import OWNED_LIST, OutputConflict, write_tree
from compiler.write import prestage as prestage_module
from compiler.write.atomic import beside, remove
from compiler.write.prestage import NICENESS, Prestage, carry_over, snapshot, unwritten
from compiler.write.writer import Staged
from tests.conftest import EXAMPLE, REPO

PATHS = ["a", "a/c", "a/c/x.yaml", "a/y.yaml", "b/x.yaml", "b/z.yaml", "report.md"]
"""Few names, some a file in one tree and a directory in another."""

TEXTS = ["one\n", "two\n", "three: 3\n"]


def is_tree(paths: set[str]) -> bool:
    """Whether no path is also a directory of another."""
    return not any(other.startswith(path + "/") for path in paths for other in paths)


trees = st.dictionaries(st.sampled_from(PATHS), st.sampled_from(TEXTS), max_size=5).filter(
    lambda tree: is_tree(set(tree))
)


def state(root: Path) -> dict[str, object]:
    """Every entry below `root`: a file's bytes and mode, a link's target, a directory's
    mark."""
    found: dict[str, object] = {}
    for path in sorted(root.rglob("*")):
        name = path.relative_to(root).as_posix()
        if path.is_symlink():
            found[name] = ("link", os.readlink(path))
        elif path.is_dir():
            found[name] = "directory"
        else:
            found[name] = (path.read_bytes(), stat.S_IMODE(path.lstat().st_mode))
    return found


Meanwhile = Callable[[Path], None] | None
"""What happens to out/ after it was carried (None: nothing)."""


class CarriedHere:
    """A prestage in this process (the writer's Carried): out/ carried at once, and checked
    again when the write asks; `meanwhile` changes out/ after it was carried."""

    def __init__(self, out: Path, max_digested: int, meanwhile: Meanwhile) -> None:
        self.out = out
        self.before = snapshot(out)
        self.carried = carry_over(out, beside(out, "staging"), max_digested)
        if meanwhile is not None:
            meanwhile(out)

    def staged(self) -> Staged | None:
        return self.carried

    def still_carried(self) -> bool:
        return unwritten(self.before, snapshot(self.out))

    def dispose(self, tree: Path) -> None:
        remove(tree)


def inode(path: Path) -> int:
    return path.lstat().st_ino


def prepare(out: Path, old: dict[str, str], user: dict[str, str], linked: str | None) -> None:
    """out/ as a compile of `old` left it, then the user's files and a link put there (an
    owned file of `old` replaced by a link, when `linked` names one)."""
    write_tree(out, old)
    for path, text in user.items():
        target = out / path
        if not any(parent.is_file() for parent in target.parents) and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
    (out / "empty").mkdir(exist_ok=True)
    (out / "b").mkdir(exist_ok=True)
    if not (out / "b" / "link").exists():
        (out / "b" / "link").symlink_to("../elsewhere")
    if linked is not None and (out / linked).is_file():
        (out / linked).unlink()
        (out / linked).symlink_to("somewhere")


def outcome(
    out: Path, new: dict[str, str], carried: CarriedHere | None
) -> tuple[object, dict[str, object]]:
    """What writing `new` over `out` says (or raises) and leaves: out/ and what is beside it."""
    try:
        changes: object = write_tree(out, new, carried)
    except (OutputConflict, CompileError, OSError) as error:
        changes = type(error).__name__
    beside_out = sorted(p.name for p in out.parent.iterdir() if p.name != out.name)
    return changes, {"out": state(out), "beside": beside_out}


def old_files(out: Path, keep: Path) -> dict[Path, bytes]:
    """Every regular file of `out` hard-linked into `keep`, with its bytes: a write that
    wrote into a file of the old tree would show there."""
    keep.mkdir()
    found: dict[Path, bytes] = {}
    for number, path in enumerate(p for p in out.rglob("*") if p.is_file() and not p.is_symlink()):
        os.link(path, keep / str(number))
        found[keep / str(number)] = path.read_bytes()
    return found


def edit_owned(out: Path) -> None:
    """Change a file gpufleet wrote in place, as a person might during a compile."""
    owned = sorted((out / OWNED_LIST).read_text().splitlines()[1:])
    for path in owned:
        if (out / path).is_file() and not (out / path).is_symlink():
            with (out / path).open("a") as file:
                file.write("# edited\n")
            return


def replace_owned(out: Path) -> None:
    """Replace a file gpufleet wrote by a new one, as an editor saves."""
    for path in sorted((out / OWNED_LIST).read_text().splitlines()[1:]):
        if (out / path).is_file() and not (out / path).is_symlink():
            (out / "saving").write_text("saved over\n")
            os.replace(out / "saving", out / path)
            return


def add_note(out: Path) -> None:
    (out / "a" if (out / "a").is_dir() else out).joinpath("notes.txt").write_text("mine\n")


def chmod_listing(out: Path) -> None:
    (out / OWNED_LIST).chmod(0o600)


MEANWHILE: list[Meanwhile] = [None, edit_owned, replace_owned, add_note, chmod_listing]
"""What may happen to out/ after it was carried."""


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    old=trees,
    new=trees,
    user=st.dictionaries(st.sampled_from([*PATHS, "u.txt", "a/u.txt"]), st.sampled_from(TEXTS)),
    linked=st.none() | st.sampled_from(PATHS),
    max_digested=st.sampled_from([16 << 20, 4]),
    meanwhile=st.sampled_from(MEANWHILE),
)
def test_a_prestaged_write_is_a_write(
    tmp_path_factory: pytest.TempPathFactory,
    old: dict[str, str],
    new: dict[str, str],
    user: dict[str, str],
    linked: str | None,
    max_digested: int,
    meanwhile: Meanwhile,
) -> None:
    """Also when a file is too large to be digested (4 bytes here), and when out/ changed
    after it was carried: then the write is one over out/ as it is."""
    root = tmp_path_factory.mktemp("prestage")
    (root / "plain").mkdir()
    (root / "staged").mkdir()
    plain, staged = root / "plain" / "out", root / "staged" / "out"
    prepare(plain, old, user, linked)
    shutil.copytree(plain, staged, symlinks=True)
    kept = {p for p in new if p in old and new[p] == old[p] and (staged / p).is_file()}
    before = {p: inode(staged / p) for p in kept if not (staged / p).is_symlink()}
    untouched = old_files(staged, root / "old")
    carried = CarriedHere(staged, max_digested, meanwhile)
    if meanwhile is not None:
        meanwhile(plain)
    expected = outcome(plain, new, None)
    assert outcome(staged, new, carried) == expected
    if meanwhile is None:  # nothing in the old tree was written into
        assert {path: path.read_bytes() for path in untouched} == untouched
    if isinstance(expected[0], str):
        return
    if meanwhile is None:  # an unchanged file of gpufleet's is the same file, not a copy
        assert {p: inode(staged / p) for p in before} == before


def test_the_carry_takes_the_snapshot_a_walk_before_it_takes(tmp_path: Path) -> None:
    """One walk carries out/ and takes its snapshot: the snapshot is the one a walk before
    the carry takes (every entry: owned and user files, a link, an empty directory), and
    out/ is as it was."""
    out = tmp_path / "out"
    write_tree(out, {"a/x.yaml": "one\n", "a/b/y.yaml": "two\n", "z.yaml": "three\n"})
    (out / "a" / "notes.txt").write_text("mine\n")
    (out / "a" / "link").symlink_to("x.yaml")
    (out / "empty").mkdir()
    before = snapshot(out)
    carrier = prestage_module._carry(out, tmp_path / "staging", 1 << 20, None)
    staged, found = carrier.staged(), carrier.found
    assert unwritten(before, found) and unwritten(before, snapshot(out))  # carrying links
    assert set(before) == staged.present.files | staged.present.directories
    assert staged.carried == staged.present.files
    assert not (tmp_path / "staging" / "empty").exists()  # as _stage: no file goes there


@pytest.mark.parametrize("swap", ["exchange", "fallback"])
def test_the_process_carries_out_over_and_removes_the_old_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swap: str
) -> None:
    """With RENAME_EXCHANGE the old tree is where staging was, and the process removes it;
    with the two-rename fallback it is set aside elsewhere, and the write removes it."""
    if swap == "fallback":
        monkeypatch.setattr("compiler.write.atomic.exchange", lambda first, second: False)
    out = tmp_path / "out"
    old = {"a/x.yaml": "one\n", "a/y.yaml": "two\n", "b/z.yaml": "three\n"}
    write_tree(out, old)
    kept = inode(out / "a" / "x.yaml")
    prestage = Prestage.start(out)
    assert prestage is not None
    expected = carry_over_elsewhere(out, tmp_path / "elsewhere")
    new = {**old, "a/y.yaml": "changed\n"}
    del new["b/z.yaml"]

    class Watched:  # the prestage, with what it carried checked on the way
        def staged(self) -> Staged | None:
            staged = prestage.staged()
            assert staged == expected
            return staged

        still_carried, dispose = prestage.still_carried, prestage.dispose

    changes = write_tree(out, new, Watched())
    assert (sorted(changes.changed), changes.removed) == ([OWNED_LIST, "a/y.yaml"], ["b/z.yaml"])
    until(lambda: not prestage.staging.exists())  # the process removes the old tree
    prestage.discard()
    assert state(out) == state_of(new)
    assert inode(out / "a" / "x.yaml") == kept
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere", "out"]


def until(condition: Callable[[], bool], seconds: float = 30) -> None:
    """Wait until `condition` holds (a process's work), failing after `seconds`."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "waited in vain"
        time.sleep(0.01)


def ended(pid: int) -> bool:
    """Whether process `pid` has ended (gone, or a zombie nobody waited for yet)."""
    status = Path(f"/proc/{pid}/stat")
    try:
        return status.read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):
        return True


def carry_over_elsewhere(out: Path, elsewhere: Path) -> object:
    """What carry_over finds in `out`, carried into another directory (then removed)."""
    try:
        return carry_over(out, elsewhere)
    finally:
        shutil.rmtree(elsewhere)
        elsewhere.mkdir()


def state_of(tree: dict[str, str]) -> dict[str, object]:
    """What out/ holds after writing `tree` into it (the listing of owned files included)."""
    found: dict[str, object] = {OWNED_LIST: None}
    for path, text in tree.items():
        parts = path.split("/")
        for end in range(1, len(parts)):
            found["/".join(parts[:end])] = "directory"
        found[path] = (text.encode(), WRITTEN_MODE)
    listing = "# Files written by gpufleet; it prunes only these.\n" + "".join(
        f"{p}\n" for p in sorted(tree)
    )
    found[OWNED_LIST] = (listing.encode(), WRITTEN_MODE)
    return dict(sorted(found.items()))


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


WRITTEN_MODE = 0o644 & ~_umask()
"""The mode of a file gpufleet writes (write_new's, less the umask)."""


def test_a_prestage_never_used_is_stopped_and_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_tree(out, {f"d{n}/f{i}.yaml": "x\n" for n in range(20) for i in range(50)})
    before = state(out)
    prestage = Prestage.start(out)
    assert prestage is not None
    prestage.discard()  # at once, carried or not (a compile that failed)
    assert state(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_a_prestage_runs_nicer_than_the_compile(tmp_path: Path) -> None:
    """It works ahead with what CPU the compile leaves (NICENESS)."""
    out = tmp_path / "out"
    write_tree(out, {f"f{i}.yaml": "x\n" for i in range(10)})
    prestage = Prestage.start(out)
    assert prestage is not None
    try:
        assert prestage.staged() is not None  # carried: it now waits for orders
        own = os.getpriority(os.PRIO_PROCESS, 0)
        found = os.getpriority(os.PRIO_PROCESS, prestage._pid)  # type: ignore[arg-type]
        assert found == min(own + NICENESS, 19)
    finally:
        prestage.discard()


def test_what_was_carried_is_taken_once_as_soon_as_it_is(tmp_path: Path) -> None:
    """take_if_carried takes what was carried once the process has sent it (it then
    verifies out/ at once); the write is then given the same, and out/ ends as the tree."""
    out = tmp_path / "out"
    write_tree(out, {f"d/f{i}.yaml": "x\n" for i in range(50)})
    prestage = Prestage.start(out)
    assert prestage is not None
    deadline = time.monotonic() + 30
    while not prestage.take_if_carried():
        assert time.monotonic() < deadline, "nothing was carried"
        time.sleep(0.01)
    staged = prestage.staged()
    assert staged is not None and prestage.staged() is staged
    assert prestage.take_if_carried()
    new = {f"d/f{i}.yaml": "x\n" if i else "y\n" for i in range(50)}
    changes = write_tree(out, new, prestage)
    prestage.discard()
    assert changes.changed == ["d/f0.yaml"]
    assert state(out) == state_of(new)
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_a_prestage_that_fails_is_none_and_the_write_stages_from_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    write_tree(out, {"a.yaml": "one\n"})

    def fails(out: Path, staging: Path, max_digested: int) -> None:
        staging.mkdir()
        (staging / "half").write_text("left by a failed carry\n")
        raise OSError("no")

    monkeypatch.setattr("compiler.write.prestage._carry", fails)
    prestage = Prestage.start(out)
    assert prestage is not None
    assert prestage.staged() is None
    assert not prestage.still_carried()
    write_tree(out, {"a.yaml": "two\n"}, prestage)
    prestage.discard()
    assert state(out) == state_of({"a.yaml": "two\n"})
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_no_prestage_where_no_process_can_be_forked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "out").mkdir()

    def no_fork() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_fork)
    assert Prestage.start(tmp_path / "out") is None


def test_no_prestage_without_an_out_directory_or_with_one_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert Prestage.start(tmp_path / "out") is None
    (tmp_path / "out").mkdir()
    monkeypatch.setenv("GPUFLEET_WORKERS", "1")
    assert Prestage.start(tmp_path / "out") is None


def test_compile_over_its_own_output_keeps_unchanged_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command uses the prestage: a second compile after an edit relinks what did not
    change, rewrites what did, and leaves nothing beside out/ but its lock."""
    monkeypatch.setenv("GPUFLEET_NO_CACHE", "1")

    def from_nothing(*args: object) -> None:
        raise AssertionError("staged from nothing: the prestage was not used")

    policies, out = tmp_path / "policies", tmp_path / "out"
    shutil.copytree(EXAMPLE, policies)
    arguments = ["compile", "--policies", str(policies), "--out", str(out)]
    assert main(arguments) == 0
    files = {p.relative_to(out).as_posix(): inode(p) for p in out.rglob("*") if p.is_file()}
    grant = policies / "grants" / "vision.yaml"
    grant.write_text(grant.read_text().replace("guaranteed: 16", "guaranteed: 8"))
    monkeypatch.setattr("compiler.write.writer._stage", from_nothing)
    assert main(arguments) == 0
    after = {p.relative_to(out).as_posix(): inode(p) for p in out.rglob("*") if p.is_file()}
    assert set(after) == set(files)
    same = {p for p in after if after[p] == files[p]}
    assert "report.md" not in same and len(same) > len(after) // 2
    assert sorted(p.name for p in tmp_path.iterdir()) == [".out.lock", "out", "policies"]


def test_the_process_finds_out_changed_after_it_carried_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file the user puts into out/ while the compile runs is kept, not lost with the
    copy carried before it was there."""
    out = tmp_path / "out"
    write_tree(out, {"a/x.yaml": "one\n", "b/y.yaml": "two\n"})
    carry = prestage_module._carry

    def then_a_note(
        out: Path, staging: Path, max_digested: int, index: FileIndex | None
    ) -> prestage_module._Carrier:
        carried = carry(out, staging, max_digested, index)
        (out / "a" / "notes.txt").write_text("mine\n")
        return carried

    monkeypatch.setattr(prestage_module, "_carry", then_a_note)
    prestage = Prestage.start(out)
    assert prestage is not None
    new = {"a/x.yaml": "one\n", "b/y.yaml": "changed\n"}
    changes = write_tree(out, new, prestage)
    prestage.discard()
    assert changes.foreign == ["a/notes.txt"]
    assert state(out) == {**state_of(new), "a/notes.txt": (b"mine\n", WRITTEN_MODE)}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


@pytest.mark.parametrize("carried", [True, False], ids=["waiting", "carrying"])
def test_a_prestage_whose_parent_is_killed_removes_what_it_carried(
    tmp_path: Path, carried: bool
) -> None:
    out = tmp_path / "out"
    write_tree(out, {f"d{n}/f{i}.yaml": "x\n" for n in range(20) for i in range(50)})
    before = state(out)
    script = f"""if True:
        import os, signal, sys
        sys.path.insert(0, {str(REPO)!r})
        from pathlib import Path
        from compiler.write.prestage import Prestage
        prestage = Prestage.start(Path({str(out)!r}))
        if {carried}:
            assert prestage.staged() is not None
        while not prestage.staging.exists():  # killed once it carries, at the latest
            pass
        print(prestage._pid, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert run.returncode == -9, run.stderr
    until(lambda: ended(int(run.stdout)))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert state(out) == before


def test_orders_to_a_prestage_that_has_ended_do_not_end_gpufleet(tmp_path: Path) -> None:
    """`gpufleet` restores SIGPIPE (compiler.launch): telling a prestage that has already
    ended (its carry failed) to clean up must not kill the command."""
    out = tmp_path / "out"
    write_tree(out, {"a.yaml": "one\n"})
    script = f"""if True:
        import signal, sys
        sys.path.insert(0, {str(REPO)!r})
        from pathlib import Path
        import compiler.write.prestage as prestage_module
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)

        def fails(*arguments):
            raise OSError("no")

        prestage_module._carry = fails
        prestage = prestage_module.Prestage.start(Path({str(out)!r}))
        assert prestage.staged() is None  # it has ended
        prestage.dispose(prestage.staging)
        prestage.discard()
        print("ended well")
    """
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert (run.returncode, run.stdout) == (0, "ended well\n"), run.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_prestage_leaves_the_signal_mask_as_it_was(tmp_path: Path) -> None:
    """Even the signals it holds back across the fork, where the caller held them back."""
    (tmp_path / "out").mkdir()
    before = signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM])
    try:
        prestage = Prestage.start(tmp_path / "out")
        assert prestage is not None
        assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == before | {signal.SIGTERM}
        prestage.discard()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def test_a_prestage_ends_where_children_are_reaped_unasked(tmp_path: Path) -> None:
    """With SIGCHLD ignored (inherited from some launchers) the kernel reaps the process."""
    out = tmp_path / "out"
    write_tree(out, {"a.yaml": "one\n"})
    previous = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        prestage = Prestage.start(out)
        assert prestage is not None
        write_tree(out, {"a.yaml": "two\n"}, prestage)
        prestage.discard()
    finally:
        signal.signal(signal.SIGCHLD, previous)
    assert state(out) == state_of({"a.yaml": "two\n"})
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_a_write_that_fails_after_asking_leaves_nothing(tmp_path: Path) -> None:
    """Between staged() and still_carried() the write may fail (a conflict, a signal): the
    process then removes what it carried when told to end, and nothing hangs."""
    out = tmp_path / "out"
    write_tree(out, {f"d{n}/f.yaml": "x\n" for n in range(50)})
    before = state(out)
    prestage = Prestage.start(out)
    assert prestage is not None
    assert prestage.staged() is not None
    prestage.discard()
    assert state(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_a_check_walk_that_fails_is_out_of_date(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """out/ changing under the walk that checks it (a directory gone) is out/ changed: the
    write stages from nothing."""
    out = tmp_path / "out"
    write_tree(out, {"a/x.yaml": "one\n", "b/y.yaml": "two\n"})

    def fails(out: Path) -> object:
        raise FileNotFoundError(2, "No such file or directory", str(out / "a"))

    monkeypatch.setattr("compiler.write.prestage.snapshot", fails)
    prestage = Prestage.start(out)
    assert prestage is not None

    def from_nothing_too(*arguments: object) -> None:
        raise AssertionError("restaged what the process carried")

    monkeypatch.setattr("compiler.write.writer._restage", from_nothing_too)
    new = {"a/x.yaml": "one\n", "b/y.yaml": "changed\n"}
    write_tree(out, new, prestage)
    prestage.discard()
    assert state(out) == state_of(new)
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_a_prestage_ended_by_others_leaves_the_staging_to_the_write(tmp_path: Path) -> None:
    """Once it has sent what it carried, a process ended while its parent lives (someone's
    `kill`) leaves the staging directory alone: the parent may be writing there."""
    out = tmp_path / "out"
    write_tree(out, {f"d{n}/f.yaml": "x\n" for n in range(50)})
    prestage = Prestage.start(out)
    assert prestage is not None
    staged = prestage.staged()
    assert staged is not None
    pid = prestage._pid
    assert pid is not None
    os.kill(pid, signal.SIGTERM)
    until(lambda: ended(pid))
    assert prestage.staging.is_dir()
    prestage.discard()
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_a_prestage_whose_channel_closes_removes_what_it_carried(tmp_path: Path) -> None:
    """A parent that lets go of the channel without a word (it dropped the prestage) is
    done with the staging directory: the process removes it and ends, as on END."""
    out = tmp_path / "out"
    write_tree(out, {f"d{n}/f.yaml": "x\n" for n in range(50)})
    prestage = Prestage.start(out)
    assert prestage is not None and prestage.staged() is not None
    assert prestage.still_carried()
    pid, channel = prestage._pid, prestage._channel
    assert pid is not None and channel is not None
    channel.close()
    until(lambda: ended(pid))
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    prestage._channel = None
    prestage.discard()
