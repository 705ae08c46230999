"""The compile cache (issue 20): `compile --check` with nothing changed answers from a record
without solving or emitting, and anything that could change the answer makes it compile."""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import compiler.commands
from compiler.cache import CompileOptions, compile_key
from compiler.cache.clusters import INPUTS, ClusterCache, ClusterResult, PackedTexts
from compiler.cache.files import prune_files, put_file, take_file
from compiler.cache.key import code_digest
from compiler.cache.parsed import ParsedFileCache
from compiler.cache.store import CompileRecord, read_record, write_record
from compiler.diagnostics import CompileError, Diagnostic
from compiler.load.document import SourceDocument
from compiler.load.loader import FILES_PER_TASK, load_policies
from compiler.per_cluster import compile_cluster
from compiler.pipeline import Compiled
from compiler.policy_files import MAX_FILE_BYTES, read_policy_files
from tests.conftest import EXAMPLE

Cli = Callable[..., tuple[int, str, str]]
OPTIONS = CompileOptions(10.0, 5.0, validate=False)


@pytest.fixture
def cache(example_repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The cache on, in a directory of this test's own; the example repository as cwd."""
    directory = tmp_path / "cache"
    monkeypatch.delenv("GPUFLEET_NO_CACHE")
    monkeypatch.setenv("GPUFLEET_CACHE", str(directory))
    return directory


def _records(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.record")) if directory.is_dir() else []


def test_unchanged_check_answers_from_the_record(run_cli: Cli, cache: Path, compiles: list[int]):
    code, first, _ = run_cli("compile", "--check")
    assert code == 0 and len(compiles) == 1 and len(_records(cache)) == 1
    code, second, _ = run_cli("compile", "--check")
    assert code == 0 and len(compiles) == 1, "the second check compiled again"
    assert second == first  # the same "ok: out is up to date (N files)"


def test_a_compile_records_what_it_wrote(run_cli: Cli, cache: Path, compiles: list[int]):
    assert run_cli("compile")[0] == 0 and len(_records(cache)) == 1
    assert run_cli("compile", "--check")[0] == 0 and len(compiles) == 1


def test_the_hit_still_reports_the_warnings(run_cli: Cli, cache: Path, compiles: list[int]):
    _, _, full = run_cli("compile", "--check")
    assert "warning" in full  # the example's feature gate warnings
    _, _, cached = run_cli("compile", "--check")
    assert len(compiles) == 1 and cached == full
    code, _, _ = run_cli("compile", "--check", "--strict")
    assert code == 1, "--strict fails on the warnings the record did not replay"


EDITS: dict[str, Callable[[Path], object]] = {
    "policy": lambda repo: _flip_byte(next((repo / "policies").rglob("*.yaml"))),
    "out-file": lambda repo: _flip_byte(repo / "out" / "report.md"),
    "plan": lambda repo: _flip_byte(next((repo / "out" / "plan").glob("*.json"))),
    "out-added": lambda repo: (repo / "out" / "extra.txt").write_text("x"),
    "dangling-policy": lambda repo: (repo / "policies" / "zz.yaml").symlink_to("gone"),
    "codeowners": lambda repo: (repo / ".github" / "CODEOWNERS").write_text("* @someone\n"),
}


@pytest.mark.parametrize("edit", EDITS.values(), ids=EDITS.keys())
def test_any_edit_compiles_again(
    run_cli: Cli, cache: Path, compiles: list[int], edit: Callable[[Path], object]
):
    assert run_cli("compile", "--check")[0] == 0
    edit(Path.cwd())
    answer = run_cli("compile", "--check")
    assert len(compiles) == 2, "an edited input was answered from the record"
    assert answer == run_cli("compile", "--check", "--no-cache")  # what the full check says


def test_an_option_that_changes_the_verdict_misses(run_cli: Cli, cache: Path, compiles: list[int]):
    assert run_cli("compile", "--check")[0] == 0
    run_cli("compile", "--check", "--solver-time-limit", "0.0001")
    assert len(compiles) == 2


def test_no_cache_compiles_and_records_nothing(run_cli: Cli, cache: Path, compiles: list[int]):
    assert run_cli("compile", "--check", "--no-cache")[0] == 0
    assert _records(cache) == []
    run_cli("compile", "--check")
    run_cli("compile", "--check", "--no-cache")
    assert len(compiles) == 3


def test_a_corrupt_record_is_no_record(run_cli: Cli, cache: Path, compiles: list[int]):
    run_cli("compile", "--check")
    (record,) = _records(cache)
    record.write_bytes(record.read_bytes()[:40])  # cut short
    assert run_cli("compile", "--check")[0] == 0 and len(compiles) == 2
    assert read_record(cache, record.stem) is not None  # the full check wrote a good one


def test_a_record_of_another_key_or_out_is_not_trusted(tmp_path: Path):
    write_record(tmp_path, CompileRecord("a" * 64, "digest", 3))
    os.replace(tmp_path / f"{'a' * 64}.record", tmp_path / f"{'b' * 64}.record")
    assert read_record(tmp_path, "b" * 64) is None
    write_record(tmp_path, CompileRecord("c" * 64, "digest", 3))
    assert read_record(tmp_path, "c" * 64) == CompileRecord("c" * 64, "digest", 3)


def test_a_record_for_another_out_misses(run_cli: Cli, cache: Path, compiles: list[int]):
    """Two writers of one key each leave a true record; a record whose out/ digest is not
    out/'s (another out/ state with the same inputs) is never taken as this one's."""
    run_cli("compile", "--check")
    (record,) = _records(cache)
    key = record.stem
    write_record(cache, CompileRecord(key, "0" * 64, 1))
    assert run_cli("compile", "--check")[0] == 0 and len(compiles) == 2


def test_an_unwritable_cache_only_disables_it(
    run_cli: Cli, cache: Path, compiles: list[int], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("GPUFLEET_CACHE", str(blocker / "cache"))  # cannot be created
    assert run_cli("compile", "--check")[0] == 0
    assert run_cli("compile", "--check")[0] == 0 and len(compiles) == 2


def test_a_record_that_cannot_be_renamed_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """A read-only or full cache directory: the record is not stored, no temporary is left,
    and the caller carries on (write_record says False instead of raising)."""

    def refuse(source: str, target: object) -> None:
        raise PermissionError(13, "Permission denied", source)

    monkeypatch.setattr("compiler.cache.files.os.replace", refuse)
    assert not write_record(tmp_path, CompileRecord("d" * 64, "x", 1))
    assert list(tmp_path.iterdir()) == []


def test_a_compile_compiles_the_bytes_its_key_was_taken_of(
    run_cli: Cli, cache: Path, compiles: list[int], monkeypatch: pytest.MonkeyPatch
):
    """A policy file edited after the key was taken (before anything was loaded): the compile
    compiles the bytes the key covers, not the edit, so its record is true; the edit is seen
    by the next compile, and putting the file back is answered from the record."""
    real = compiler.commands.compile_as_compile_would
    policy = next((Path.cwd() / "policies").rglob("*.yaml"))
    original = policy.read_bytes()

    def edited_meanwhile(*args: object, **kwargs: object) -> Compiled:
        policy.write_text("this: [is not a policy\n", encoding="utf-8")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(compiler.commands, "compile_as_compile_would", edited_meanwhile)
    assert run_cli("compile", "--check")[0] == 0  # the file as the key saw it
    assert len(_records(cache)) == 1
    monkeypatch.setattr(compiler.commands, "compile_as_compile_would", real)
    code, _, errors = run_cli("compile", "--check")
    assert code == 2 and "GF1" in errors, "the edit was answered from the record"
    policy.write_bytes(original)
    monkeypatch.setattr(compiler.commands, "compile_as_compile_would", _failing)
    assert run_cli("compile", "--check")[0] == 0  # from the record: nothing compiled


def _failing(*args: object, **kwargs: object) -> Compiled:
    raise AssertionError("compiled where the record answers")


def test_the_loader_reads_nothing_the_snapshot_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    policies, out = EXAMPLE, tmp_path / "out"
    expected = load_policies(policies)
    snapshot = read_policy_files(policies)
    key = compile_key(policies, snapshot, out, OPTIONS, "code")

    def refuse(*args: object, **kwargs: object) -> bytes:
        raise AssertionError("a policy file was read again")

    monkeypatch.setattr("compiler.load.loader.read_at_most", refuse)
    monkeypatch.setattr("compiler.load.loader.scan_policy_files", refuse)
    assert load_policies(policies, snapshot=snapshot) == expected
    assert snapshot.contents == {}  # dropped once loaded
    with pytest.raises(RuntimeError):
        load_policies(policies, snapshot=snapshot)
    monkeypatch.undo()
    assert compile_key(policies, read_policy_files(policies), out, OPTIONS, "code") == key


def test_the_key_covers_code_templates_policies_and_options(tmp_path: Path):
    code, templates, policies = tmp_path / "code", tmp_path / "templates", tmp_path / "policies"
    for directory in (code, templates, policies):
        directory.mkdir()
    (code / "emit.py").write_text("X = 1\n")
    (templates / "namespace.yaml.j2").write_text("kind: Namespace\n")
    (policies / "fleet.yaml").write_text("kind: Fleet\n")
    (policies / "notes.txt").write_text("not a policy\n")
    out = tmp_path / "out"

    def key(options: CompileOptions = OPTIONS) -> str:
        files = read_policy_files(policies)
        return compile_key(policies, files, out, options, code_digest((code, templates)))

    before = key()
    assert key() == before  # deterministic
    (policies / "notes.txt").write_text("still not a policy\n")
    assert key() == before  # the loader does not read it
    for changed in (code / "emit.py", templates / "namespace.yaml.j2", policies / "fleet.yaml"):
        _flip_byte(changed)
        assert key() != before, f"editing {changed.name} kept the key"
        _flip_byte(changed)
        assert key() == before
    (policies / "team.yml").write_text("")
    assert key() != before
    (policies / "team.yml").unlink()
    assert key(CompileOptions(10.0, 5.0, validate=True)) != before
    assert key(CompileOptions(1.0, 5.0, validate=False)) != before
    shutil.move(policies / "fleet.yaml", policies / "renamed.yaml")
    assert key() != before


def _flip_byte(path: Path) -> None:
    """Change the last byte of a file (flipping it back restores the file)."""
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01
    path.write_bytes(bytes(data))


STAGES = ("compiler.pipeline", "compiler.load.loader", "yaml", "ortools", "jinja2", "pydantic")


def test_an_answer_from_the_record_loads_no_stage(example_repo: Path, tmp_path: Path):
    """What makes the answer fast: it hashes the inputs and out/, and loads neither the
    policies' parser (nor the YAML library), the model, the solver nor the templates (a fresh
    process each time)."""
    env = {**os.environ, "GPUFLEET_CACHE": str(tmp_path / "cache")}
    env.pop("GPUFLEET_NO_CACHE")
    script = (
        "import sys\n"
        "from compiler.cli import main\n"
        "code = main(['compile', '--check'])\n"
        f"print(code, [m for m in {STAGES!r} if m in sys.modules])\n"
    )

    def loaded() -> str:
        done = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        )
        return done.stdout.strip().splitlines()[-1]

    assert loaded() != "0 []"  # the first check compiles, and records
    assert loaded() == "0 []"


def test_corrupt_entries_are_misses(run_cli: Cli, cache: Path):
    """Every parsed-file and cluster entry, and every kept fingerprint of a cluster's inputs,
    cut short: the next compile parses, fingerprints, solves and emits again and writes what
    a compile without the cache writes."""
    assert run_cli("compile")[0] == 0
    parts = ("parsed", "clusters", f"clusters/{INPUTS}")
    entries = [p for part in parts for p in (cache / part).iterdir() if p.is_file()]
    assert any((cache / "clusters" / INPUTS).iterdir()), "no fingerprint was kept"
    assert entries, "the compile kept nothing to reuse"
    for entry in entries:
        entry.write_bytes(entry.read_bytes()[:20])
    assert run_cli("compile")[0] == 0
    assert run_cli("compile", "--no-cache", "--check")[0] == 0  # out/ is what it should be


def test_a_reused_cluster_is_unpacked_only_where_out_differs(
    run_cli: Cli, cache: Path, monkeypatch: pytest.MonkeyPatch
):
    """A one-team change in prod-east: prod-west comes from the cache and its texts stay
    packed, since out/ holds its files (compared by digest). With one of its files edited in
    out/, the write unpacks its texts to write that file back."""
    unpacked: list[str] = []
    real = PackedTexts.__getitem__

    def counted(self: PackedTexts, path: str) -> str:
        unpacked.append(path)
        return real(self, path)

    monkeypatch.setattr(PackedTexts, "__getitem__", counted)
    assert run_cli("compile")[0] == 0
    grant = Path("policies/grants/gpu-ops.yaml")  # gpu-ops is in prod-east only
    grant.write_text(grant.read_text().replace("limit: 8", "limit: 9"))
    unpacked.clear()
    assert run_cli("compile")[0] == 0
    assert unpacked == []
    edited = sorted(Path("out/clusters/prod-west").rglob("*.yaml"))[0]
    original = edited.read_text()
    edited.write_text(original + "# edited\n")
    grant.write_text(grant.read_text().replace("limit: 9", "limit: 10"))
    assert run_cli("compile")[0] == 0
    assert edited.read_text() == original
    assert str(edited.relative_to("out")) in unpacked
    assert all(path.startswith("clusters/prod-west/") for path in unpacked), unpacked


def test_an_entry_whose_texts_changed_is_a_miss(compiled_example: Compiled, tmp_path: Path) -> None:
    """The texts are unpacked late, so an entry is read whole only if they are the bytes it
    kept (their CRC-32): other bytes are a miss at once, not an error while writing."""
    fleet, previous = compiled_example.fleet, {}
    clusters = ClusterCache(tmp_path, CompileOptions(20.0, 10.0, False), "code")
    results = {
        c.name: compile_cluster(fleet, c, None, 20.0, 10.0, digested=True) for c in fleet.clusters
    }
    assert all(isinstance(r, ClusterResult) for r in results.values())
    clusters.store(fleet, previous, results)  # type: ignore[arg-type]
    cluster = fleet.clusters[0]
    key = clusters.key(cluster, fleet, None)
    found = clusters.read(key, cluster.name)
    assert found is not None and isinstance(found.files, PackedTexts)
    assert dict(found.files) == results[cluster.name].files  # type: ignore[union-attr]
    entry = tmp_path / key
    format_, stored, changed, head, texts, crc = pickle.loads(entry.read_bytes())
    flipped = texts[:-1] + bytes([texts[-1] ^ 1])
    entry.write_bytes(pickle.dumps((format_, stored, changed, head, flipped, crc)))
    assert clusters.read(key, cluster.name) is None


def test_parsed_files_load_as_without_the_cache_cold_warm_or_in_part(tmp_path: Path):
    """More files than one worker task: a cold cache (the first task's files all unknown, so
    the rest go to workers unprobed), a warm one, and one that knows only the later files all
    give the documents and warnings of a load without the cache."""
    policies = tmp_path / "policies"
    policies.mkdir()
    count = FILES_PER_TASK + 40
    for n in range(count):
        (policies / f"f{n:03}.yaml").write_text(f"a: {n}\nb: [x, {n}]\n" if n % 9 else "# empty\n")
    plain_warnings: list[Diagnostic] = []
    plain = load_policies(policies, plain_warnings)
    cache = ParsedFileCache(tmp_path / "parsed", "code")

    def cached() -> tuple[list[SourceDocument], list[Diagnostic]]:
        warnings: list[Diagnostic] = []
        return load_policies(policies, warnings, cache), warnings

    assert cached() == (plain, plain_warnings)  # cold
    assert len(list(cache.directory.iterdir())) == count  # empty files too: they hold no document
    assert cached() == (plain, plain_warnings)  # warm
    for entry in sorted(cache.directory.iterdir())[: FILES_PER_TASK + 5]:
        entry.unlink()  # the cache now knows only some of the later files
    assert cached() == (plain, plain_warnings)


def test_pruning_deletes_the_least_recently_used_in_batches(tmp_path: Path) -> None:
    """Up to half as many again as the limit, nothing is deleted (no stat of every entry on
    each compile); beyond, the least recently used go down to the limit, and temporaries of
    other writers stay."""
    for number in range(15):
        assert put_file(tmp_path, f"entry-{number:02}", b"x")
        os.utime(tmp_path / f"entry-{number:02}", ns=(number * 10**9, number * 10**9))
    (tmp_path / ".entry-99.123.tmp").write_bytes(b"being written")
    prune_files(tmp_path, 10)
    assert len(list(tmp_path.iterdir())) == 16  # 15 <= 10 + 5: the batch is not full yet
    assert put_file(tmp_path, "entry-15", b"x")  # now 16 entries, the newest
    prune_files(tmp_path, 10)
    kept = sorted(path.name for path in tmp_path.iterdir())
    assert kept == [".entry-99.123.tmp", *(f"entry-{n:02}" for n in range(6, 16))]
    assert take_file(tmp_path, "entry-06") == b"x"


def test_cache_files_are_readable_by_their_owner_only(tmp_path: Path) -> None:
    """Entries hold policy documents: mode 0600 whatever the umask allows (as mkstemp's), and
    a rewrite leaves no temporary file behind."""
    assert put_file(tmp_path / "new", "entry", b"documents")
    assert (tmp_path / "new" / "entry").stat().st_mode & 0o777 == 0o600
    assert put_file(tmp_path / "new", "entry", b"newer")
    assert take_file(tmp_path / "new", "entry") == b"newer"
    assert [p.name for p in (tmp_path / "new").iterdir()] == ["entry"]


def test_the_key_reads_no_more_of_a_file_than_the_loader(tmp_path: Path) -> None:
    """A policy file of gigabytes (or a link to one) is refused by the loader unread past
    MAX_FILE_BYTES; taking the compile key reads no further."""
    (tmp_path / "huge.yaml").write_bytes(b"#" * (3 * MAX_FILE_BYTES))
    (tmp_path / "small.yaml").write_bytes(b"kind: Fleet\n")
    files = read_policy_files(tmp_path)
    assert {name: len(read.data) for name, read in files.contents.items()} == {
        "huge.yaml": MAX_FILE_BYTES + 1,
        "small.yaml": 12,
    }


def test_codeowners_is_checked_against_the_files_the_compile_loaded(
    run_cli: Cli, cache: Path, monkeypatch: pytest.MonkeyPatch
):
    """A policy file CODEOWNERS routes wrongly (GF229), deleted while the compile runs: the
    check still covers it (the compile loaded it and its record covers it), so nothing is
    recorded that a later check, the file restored, would answer `ok` from."""
    tier = Path.cwd() / "policies" / "tiers" / "inference.yaml"
    codeowners = Path.cwd() / ".github" / "CODEOWNERS"
    codeowners.write_text(codeowners.read_text() + "/policies/tiers/inference.yaml @rogue\n")
    real = compiler.commands.compile_as_compile_would

    def deleted_meanwhile(*args: object, **kwargs: object) -> Compiled:
        compiled = real(*args, **kwargs)  # type: ignore[arg-type]
        tier.unlink()
        return compiled

    monkeypatch.setattr(compiler.commands, "compile_as_compile_would", deleted_meanwhile)
    code, _, errors = run_cli("compile", "--check")
    assert code != 0 and "GF229" in errors and "inference.yaml" in errors
    assert _records(cache) == []


def test_a_link_is_followed_once_where_its_bytes_are_read(tmp_path: Path) -> None:
    """A policy file that links outside the policy directory when the key is taken, and
    inside when the loader looks: the loader judges the link it read (GF122), and what lies
    outside is never read."""
    policies, secret = tmp_path / "policies", tmp_path / "secret.yaml"
    policies.mkdir()
    secret.write_text("token: SECRET-VALUE\n")
    (policies / "inside.yaml").write_text("kind: Fleet\n")
    link = policies / "x.yaml"
    link.symlink_to(secret)
    snapshot = read_policy_files(policies)
    assert snapshot.contents["x.yaml"].data == b""  # not read: it leads outside
    link.unlink()
    link.symlink_to(policies / "inside.yaml")
    with pytest.raises(CompileError) as refused:
        load_policies(policies, snapshot=snapshot)
    (diagnostic,) = refused.value.diagnostics
    assert diagnostic.code == "GF122" and "SECRET" not in str(diagnostic)
