"""Read `policies/**/*.yaml` with libyaml, keeping file, line and column for every node.

Aliases are expanded (with a budget, so an alias bomb is refused rather than followed),
duplicate keys and custom tags are errors, and every value becomes a plain Python builtin.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path as FsPath
from typing import Any, Protocol

import yaml as pyyaml

from compiler.diagnostics import CompileError, Diagnostic, Problems, Span, fail
from compiler.file_bytes import FileDigest, bytes_digest, read_at_most
from compiler.load.budget import (
    MAX_DEPTH,
    MAX_NODES_PER_FILE,
    check_budget,
    check_yaml12_budget,
    within_budget_unchecked,
)
from compiler.load.document import Path, SourceDocument, pack_position, unpack_position
from compiler.parallel import map_in_order
from compiler.policy_files import (
    MAX_FILE_BYTES,
    FileRead,
    PolicyEntry,
    PolicySnapshot,
    scan_policy_files,
)


def display_path(path: FsPath) -> str:
    """The path to print for a file: relative to the working directory when below it."""
    return _shown(path, path.resolve(), FsPath.cwd().resolve())


def _shown(path: FsPath, real: FsPath, here: FsPath) -> str:
    return real.relative_to(here).as_posix() if real.is_relative_to(here) else path.as_posix()


FILES_PER_TASK = 64
"""Files one worker loads at a time: a fleet of hundreds of files is read on every core."""


@dataclass(frozen=True)
class PolicyRoot:
    """The policy directory as its files are named: its real path, the working directory's,
    and what `_shown` puts before the relative path of a file in it that is not a link (the
    same for all of them, so worked out once rather than per file; None when the working
    directory is inside the policy directory, where each file is named on its own)."""

    real: FsPath
    here: FsPath
    shown: str | None

    @classmethod
    def of(cls, root: FsPath) -> PolicyRoot:
        """The policy directory `root`, as given on the command line."""
        real, here = root.resolve(), FsPath.cwd().resolve()
        if here != real and here.is_relative_to(real):
            return cls(real, here, None)
        base = _shown(root, real, here)
        return cls(real, here, "" if base == "." else base.rstrip("/") + "/")

    def name(self, entry: PolicyEntry, real: FsPath | None) -> str:
        """How diagnostics show the file `entry`, whose real path is `real` (None: not a
        link, so it is the policy directory's plus its relative path)."""
        if real is None and self.shown is not None:
            return self.shown + entry.relative
        return _shown(entry.path, real or self.real / entry.relative, self.here)


class ParsedFiles(Protocol):
    """Documents parsed from a file before, by the FileDigest of the file's bytes and its
    names (the compile cache's compiler.cache.parsed): a file read again unchanged is not
    parsed again."""

    def get(self, digest: FileDigest, shown: str, origin: str) -> list[SourceDocument] | None:
        """What parsing the bytes of `digest` as file `shown` (`origin`) gave before, or None."""

    def put(
        self, digest: FileDigest, shown: str, origin: str, documents: list[SourceDocument]
    ) -> None:
        """Keep what parsing the bytes of `digest` as file `shown` (`origin`) gave."""


def load_policies(
    root: FsPath,
    warnings: list[Diagnostic] | None = None,
    parsed: ParsedFiles | None = None,
    snapshot: PolicySnapshot | None = None,
) -> list[SourceDocument]:
    """Load every policy document below `root`, or raise CompileError with all load errors.

    Warnings (a file that holds no document: GF111) go to `warnings`, for the resolve stage
    to report with its own, so that suppressions and --strict treat them alike. With
    `parsed`, a file whose bytes were parsed before is not parsed again (a file that fails
    is never kept: its errors are found again). With `snapshot` (`root` read before), the
    files are those it lists and their bytes those it holds: nothing is read again.
    """
    if not root.is_dir():
        raise fail("GF110", f"policy directory {root} does not exist", Span(str(root)))
    files, others = (snapshot.files, snapshot.others) if snapshot else scan_policy_files(root)
    contents = snapshot.take() if snapshot else None
    unreadable = [
        Diagnostic(
            "GF109",
            f"{display_path(other.path.parent)}/{other.path.name} is not a regular file "
            f"({'a link to nothing' if other.link else 'a pipe, socket or device'})",
            Span(f"{display_path(other.path.parent)}/{other.path.name}"),
            ("a policy file is a regular file (or a link to one inside the policy directory)",),
        )
        for other in others
    ]
    Problems(unreadable).raise_if_errors()
    if not files:
        raise fail("GF110", f"no *.yaml files below {root}", Span(display_path(root)))
    place = PolicyRoot.of(root)
    results: list[FileResult | None] = [None] * len(files)
    if parsed is not None:
        results = _read_known(place, parsed, files, contents)
    missing = [index for index, result in enumerate(results) if result is None]
    if snapshot is not None and contents is not None:  # bytes the index vouched for, to parse
        for index in missing:
            entry = files[index]
            if (vouched := contents[entry.relative]).data is None:
                contents[entry.relative] = snapshot.read_again(entry, vouched)
    tasks = load_tasks(missing)
    read = partial(read_files, place, parsed, contents)
    read_in_tasks = map_in_order(read, [[files[i] for i in task] for task in tasks])
    for task, found in zip(tasks, read_in_tasks, strict=True):
        for index, result in zip(task, found, strict=True):
            results[index] = result
    documents: list[SourceDocument] = []
    problems = Problems()
    for read_one in results:
        assert read_one is not None  # every file was read, here or in a worker
        documents.extend(read_one[0])
        problems.extend(read_one[1])
    Problems(problems.errors).raise_if_errors()  # the warnings go on, with resolve's
    if warnings is not None:
        warnings.extend(problems.warnings)
    return documents


def _read_known(
    place: PolicyRoot,
    parsed: ParsedFiles,
    files: list[PolicyEntry],
    contents: Mapping[str, FileRead] | None,
) -> list[FileResult | None]:
    """What each file the cache knows holds, None for the others: read here, where no worker
    has to send the documents back. When the first FILES_PER_TASK files are all unknown, the
    cache is cold (the compiler changed, say) and the rest are not looked up here: the
    workers look them up anyway, and probing thousands of files here would cost a tenth of
    a large compile."""
    results: list[FileResult | None] = []
    for entry in files:
        if len(results) == FILES_PER_TASK and not any(results):
            return results + [None] * (len(files) - len(results))
        results.append(read_file(place, parsed, contents, entry, parse=False))
    return results


def load_tasks(indices: list[int]) -> list[list[int]]:
    """The files (by index) in groups of FILES_PER_TASK, for worker processes."""
    return [indices[i : i + FILES_PER_TASK] for i in range(0, len(indices), FILES_PER_TASK)]


FileResult = tuple[list[SourceDocument], list[Diagnostic]]
"""A file's documents and the problems found in it."""


def read_files(
    place: PolicyRoot,
    parsed: ParsedFiles | None,
    contents: Mapping[str, FileRead] | None,
    files: list[PolicyEntry],
) -> list[FileResult | None]:
    """What each of `files` holds (one worker's task; parsed, so never None)."""
    return [read_file(place, parsed, contents, entry) for entry in files]


def read_file(
    place: PolicyRoot,
    parsed: ParsedFiles | None,
    contents: Mapping[str, FileRead] | None,
    entry: PolicyEntry,
    parse: bool = True,
) -> FileResult | None:
    """What one file holds (as `contents` has it where given: read before, links followed
    then; else read now); without `parse`, None when `parsed` does not know its bytes."""
    # only the file itself can be a link (links to directories are not followed): any other
    # file is inside the policy directory, and its names are the directory's plus its own
    if contents is not None:
        real, raw, digest = contents[entry.relative]
    else:
        real, raw, digest = (entry.path.resolve() if entry.link else None), None, None
    shown = place.name(entry, real)
    try:
        _check_inside(entry.relative, real, place.real, shown)
        origin = f"{place.real.name}/{entry.relative}"
        found = load_file(real or entry.path, shown, origin, parsed, parse, raw, digest)
    except CompileError as error:
        return [], list(error.diagnostics)
    if found is None:
        return None
    return found, [] if found else [_empty_file(shown)]


def _empty_file(shown: str) -> Diagnostic:
    """GF111: a file with nothing but comments, blank lines or empty documents. It is
    skipped, but it is most likely a policy someone meant to write (or emptied by mistake),
    so it is said rather than ignored."""
    return Diagnostic(
        "GF111",
        "this file holds no policy document (only comments, blank lines or empty "
        "documents): it is ignored",
        Span(shown, 1, 1),
        ("write the policy it is meant to hold, or delete the file",),
    )


def _check_inside(relative: str, real: FsPath | None, real_root: FsPath, shown: str) -> None:
    """Refuse a policy file whose name is not UTF-8, or that links outside the policy directory.

    The name lands in every object's source annotation, which must be text; and diagnostics
    quote source lines, so following a link outside could print a file that is not policy
    (a CI secret, say) into a public log.
    """
    try:
        relative.encode("utf-8")
    except UnicodeEncodeError:
        message = f"the file name {relative.rsplit('/', 1)[-1]!r} is not UTF-8"
        raise fail("GF109", message, Span(shown, 1, 1), "rename the file") from None
    if real is not None and not real.is_relative_to(real_root):
        raise fail(
            "GF122",
            f"{shown} is a symlink to {real}, outside {real_root}",
            Span(shown),
            "copy the file into the policy directory instead of linking to it",
        )


def load_file(
    path: FsPath,
    shown: str,
    origin: str,
    parsed: ParsedFiles | None = None,
    parse: bool = True,
    raw: bytes | None = None,
    digest: FileDigest | None = None,
) -> list[SourceDocument] | None:
    """Load one file's documents (parsed only when `parsed` does not have them; without
    `parse`, None then); empty documents are skipped. `raw` is its bytes if read before (at
    most MAX_FILE_BYTES + 1 of them), `digest` their FileDigest if known: all that finding
    them in `parsed` takes (a file that failed to load is never kept there)."""
    if parsed is not None and digest is not None:
        if (known := parsed.get(digest, shown, origin)) is not None:
            return known
        if not parse:
            return None
    start = Span(shown, 1, 1)
    try:
        if raw is None:
            raw, digest = read_at_most(path, MAX_FILE_BYTES + 1), None  # read here
        if len(raw) > MAX_FILE_BYTES:
            message = f"file is larger than {MAX_FILE_BYTES} bytes"
            raise fail("GF120", message, start, "split the policy into smaller files")
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        message = f"file is not UTF-8 ({error.reason} at byte {error.start})"
        raise fail("GF109", message, start, "save the file as UTF-8") from None
    except OSError as error:
        raise fail("GF109", f"cannot read file: {error.strerror}", start) from None
    if parsed is not None and digest is None:
        digest = bytes_digest(raw)
        if (known := parsed.get(digest, shown, origin)) is not None:
            return known
    if not parse:
        return None
    documents = parse_documents(text, shown, origin)
    if parsed is not None and digest is not None:
        parsed.put(digest, shown, origin, documents)
    return documents


def compose(text: str, shown: str, max_nodes: int = MAX_NODES_PER_FILE) -> list[Any]:
    """The documents' root nodes, each node tagged under YAML 1.2.

    The budget pass (load.budget: node and depth budgets with aliases expanded, core tags
    only) runs on libyaml's event stream first; libyaml then composes the nodes, resolving
    untagged scalars under YAML 1.2's core schema (_Yaml12Loader). libyaml's parser speaks
    YAML 1.1 and refuses some valid YAML 1.2 (a `:` inside a plain scalar in a flow mapping,
    e.g. a URL): a text it cannot parse goes to ruamel.yaml's YAML 1.2 composer, and the
    syntax error stands only if ruamel.yaml cannot read it either. The same budgets are
    checked on ruamel.yaml's events before it composes anything.
    """
    try:
        check_budget(text, shown, max_nodes)
    except CompileError as error:
        if [d.code for d in error.diagnostics] != ["GF101"]:
            raise
        from ruamel.yaml import YAML  # imported only for what libyaml refuses
        from ruamel.yaml.error import YAMLError

        try:
            check_yaml12_budget(YAML(typ="safe", pure=True).parse(text), shown, max_nodes)
            return list(YAML(typ="safe", pure=True).compose_all(text))
        except (YAMLError, RecursionError, AssertionError):
            # ruamel.yaml asserts on some input it cannot read (a %YAML version it does not
            # know, for one): it cannot read the text either, so libyaml's error stands.
            raise error from None
    return list(pyyaml.compose_all(text, Loader=_Yaml12Loader))


def parse_documents(
    text: str, shown: str, origin: str, max_nodes: int = MAX_NODES_PER_FILE
) -> list[SourceDocument]:
    """Parse YAML text (possibly several documents) into SourceDocuments, refusing more than
    `max_nodes` nodes (a policy file's budget unless the caller reads a larger kind of file:
    a cluster dump, compiler.inventory).

    Documents are composed into nodes (positions on every node) and turned into builtins here
    under the YAML 1.2 core schema, so duplicate keys, tags, merge keys and alias expansion are
    checked in one place, with the node's own position. A short text that can hold nothing the
    budget pass refuses (load.budget.within_budget_unchecked) is composed without the pass;
    if anything goes wrong it is parsed again on the checked path, so that every problem is
    reported as that path reports it.
    """
    if within_budget_unchecked(text, max_nodes):
        try:
            return _documents(
                pyyaml.compose_all(text, Loader=_Yaml12Loader), shown, origin, max_nodes
            )
        except Exception:  # found again, and reported, on the checked path
            pass
    try:
        return _documents(compose(text, shown, max_nodes), shown, origin, max_nodes)
    except pyyaml.MarkedYAMLError as error:
        hint = "check the YAML syntax near here"
        raise Problems([_marked("GF101", error, shown, hint)]).error() from None
    except pyyaml.YAMLError as error:
        raise fail("GF101", str(error).strip(), Span(shown, 1, 1)) from None
    except RecursionError:
        raise fail("GF103", "YAML nesting is too deep", Span(shown, 1, 1)) from None


def _documents(
    roots: Iterable[Any], shown: str, origin: str, max_nodes: int
) -> list[SourceDocument]:
    """The documents of composed `roots` (empty ones skipped), each node's position kept."""
    documents: list[SourceDocument] = []
    for index, root in enumerate(roots):
        if root is None or (root.id == "scalar" and root.tag == _NULL):
            continue
        converter = _Converter(shown, max_nodes)
        converter.positions[()] = pack_position(*_position(root))
        data = converter.convert(root, (), 0)
        documents.append(SourceDocument(shown, origin, index, data, converter.positions))
    return documents


def _marked(code: str, error: pyyaml.MarkedYAMLError, shown: str, hint: str) -> Diagnostic:
    mark = error.problem_mark or error.context_mark
    line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    problem = " ".join(str(part) for part in (error.context, error.problem) if part)
    return Diagnostic(code, problem.strip() or "invalid YAML", Span(shown, line, column), (hint,))


_YAML = "tag:yaml.org,2002:"
_STR, _INT, _FLOAT, _BOOL, _NULL = (_YAML + t for t in ("str", "int", "float", "bool", "null"))
_MAP, _SEQ, _MERGE, _TIMESTAMP = (_YAML + t for t in ("map", "seq", "merge", "timestamp"))
_INT_BOUND = 2**63
"""Kubernetes integers are int64; anything larger is no policy value."""
_SPECIAL_FLOATS = {".inf": math.inf, "+.inf": math.inf, "-.inf": -math.inf, ".nan": math.nan}


_CORE_SCHEMA = (  # YAML 1.2 core schema, for plain scalars
    (_NULL, re.compile(r"^(?:~|null|Null|NULL|)$")),
    (_BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")),
    (_INT, re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")),
    (
        _FLOAT,
        re.compile(
            r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
            r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
        ),
    ),
)


@lru_cache(maxsize=65536)
def _yaml12_tag(value: str) -> str:
    """The tag of a plain scalar under the YAML 1.2 core schema."""
    return next((t for t, pattern in _CORE_SCHEMA if pattern.match(value)), _STR)


class _Yaml12Loader(getattr(pyyaml, "CSafeLoader", pyyaml.SafeLoader)):  # type: ignore[misc]
    """libyaml's composer (PyYAML's pure-Python one where libyaml is missing), with untagged
    scalars resolved under the YAML 1.2 core schema rather than PyYAML's YAML 1.1 rules: `yes`
    stays a string, `0o17` is an int. Explicit tags are libyaml's to keep."""

    def resolve(self, kind: type[Any], value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is not pyyaml.ScalarNode:
            return _SEQ if kind is pyyaml.SequenceNode else _MAP
        if not implicit[0]:  # quoted, or the non-specific tag `!`
            return _STR
        return _MERGE if value == "<<" else _yaml12_tag(value)


def _position(node: Any) -> tuple[int, int]:
    """Where a node starts: 1-based line and column."""
    mark = node.start_mark
    return mark.line + 1, mark.column + 1


class _Converter:
    """Turns composed nodes into builtins, recording a span for every node."""

    def __init__(self, file: str, max_nodes: int) -> None:
        self.file = file
        self.max_nodes = max_nodes
        self.positions: dict[Path, int] = {}
        self.nodes = 0

    def span_of(self, node: Any) -> Span:
        """Where a node starts (1-based)."""
        return Span(self.file, *_position(node))

    def _at(self, path: Path) -> Span:
        packed = self.positions.get(path)
        return Span(self.file, *(unpack_position(packed) if packed else None) or (1, 1))

    def convert(self, node: Any, path: Path, depth: int) -> Any:
        self.nodes += 1
        if self.nodes > self.max_nodes:
            message = f"document expands to more than {self.max_nodes} nodes"
            hint = "anchors and aliases that multiply are refused"
            raise fail("GF103", message, self._at(path), hint)
        if depth > MAX_DEPTH:
            raise fail("GF103", f"nesting deeper than {MAX_DEPTH} levels", self._at(path))
        tag = node.tag
        if node.id == "mapping" and tag in (_MAP, _MERGE):
            return self._mapping(node, path, depth)
        if node.id == "sequence" and tag == _SEQ:
            return self._sequence(node, path, depth)
        if node.id == "scalar" and tag in _SCALARS:
            return self._scalar(node, tag)
        hint = "policy files use plain YAML: remove the tag"
        raise fail("GF103", f"YAML tag {tag} is not allowed", self.span_of(node), hint)

    def _scalar(self, node: Any, tag: str) -> Any:
        try:
            value = _SCALARS[tag](node.value)
        except UnicodeEncodeError:
            raise fail(
                "GF101",
                "a string that is not valid Unicode (a lone surrogate)",
                self.span_of(node),
                "write the character itself, not half of it",
            ) from None
        except (ValueError, OverflowError):
            value = None
            kind = tag.rsplit(":", 1)[-1]
            problem = f"cannot read {node.value[:40]!r} as a YAML {kind}"
        else:
            if not isinstance(value, int) or isinstance(value, bool) or abs(value) < _INT_BOUND:
                return value
            problem = "this integer is out of range"
        hint = "quote the value if it is meant as text"
        raise fail("GF107", problem, self.span_of(node), hint)

    def _pairs(self, node: Any) -> list[tuple[Any, Any]]:
        """The mapping's key/value nodes with `<<` merges applied (own keys win)."""
        merges = [k for k, _ in node.value if k.tag == _MERGE]
        if not merges:  # most mappings
            pairs: list[tuple[Any, Any]] = node.value
            return pairs
        own = [(k, v) for k, v in node.value if k.tag != _MERGE]
        if len(merges) > 1:
            hint = "merge several mappings with one key: `<<: [*a, *b]`"
            raise fail("GF102", "duplicate merge key `<<`", self.span_of(merges[1]), hint)
        merged: list[tuple[Any, Any]] = []
        for key, value in node.value:
            if key.tag != _MERGE:
                continue
            sources = value.value if value.id == "sequence" else [value]
            for source in sources:
                if source.id != "mapping":
                    hint = "`<<` merges mappings only"
                    raise fail("GF101", "a merge key needs a mapping", self.span_of(source), hint)
                merged.extend(self._pairs(source))
        taken = {k.value for k, _ in own if k.id == "scalar"}
        extra: dict[object, tuple[Any, Any]] = {}
        for key, value in merged:
            if key.id == "scalar" and key.value not in taken:
                extra.setdefault(key.value, (key, value))
        return own + list(extra.values())

    def _mapping(self, node: Any, path: Path, depth: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        keys: dict[str, Any] = {}
        for key_node, value_node in self._pairs(node):
            key_tag = key_node.tag
            if key_node.id != "scalar" or key_tag not in _SCALARS:
                raise fail("GF107", "mapping keys must be plain scalars", self.span_of(key_node))
            key = self._scalar(key_node, key_tag)
            name = key if isinstance(key, str) else str(key_node.value).lower()
            if name in keys:
                first = self.span_of(keys[name])
                raise fail(
                    "GF102",
                    f"duplicate key {name!r} in a mapping",
                    self.span_of(key_node),
                    "remove or rename one of the keys",
                    related=(("first defined here", first),),
                )
            keys[name] = key_node
            child = (*path, name)
            self.positions[child] = pack_position(*_position(value_node), _position(key_node))
            result[name] = self.convert(value_node, child, depth + 1)
        return result

    def _sequence(self, node: Any, path: Path, depth: int) -> list[Any]:
        result: list[Any] = []
        for index, item in enumerate(node.value):
            child = (*path, index)
            self.positions[child] = pack_position(*_position(item))
            result.append(self.convert(item, child, depth + 1))
        return result


def _int(text: str) -> int:
    digits = text.replace("_", "")
    sign = -1 if digits.startswith("-") else 1
    digits = digits.lstrip("+-")
    if digits[:2].lower() in ("0o", "0x", "0b"):
        return sign * int(digits, 0)
    return sign * int(digits)


def _timestamp(text: str) -> str:
    """An explicit `!!timestamp`: kept as written, but it must be a real date."""
    datetime.date.fromisoformat(text[:10])
    return text


def _text(text: str) -> str:
    text.encode("utf-8")  # a lone surrogate (`"\ud800"`) is not text
    return text


def _float(text: str) -> float:
    return _SPECIAL_FLOATS.get(text.lower()) or float(text.replace("_", ""))


def _bool(text: str) -> bool:
    """YAML 1.2's booleans only: an explicit `!!bool yes` (or `!!bool no`) is no bool."""
    if text.lower() not in ("true", "false"):
        raise ValueError(f"not a boolean: {text}")
    return text.lower() == "true"


_SCALARS: dict[str, Callable[[str], Any]] = {
    _STR: _text,
    _INT: _int,
    _FLOAT: _float,
    _BOOL: _bool,
    _NULL: lambda text: None,
    _TIMESTAMP: _timestamp,  # kept as written: no field of the policy language is a timestamp
    _MERGE: _text,  # `<<` merges only as a key (_Converter._pairs); as a value it is text
}
