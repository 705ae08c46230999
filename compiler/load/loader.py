"""Read `policies/**/*.yaml` with ruamel.yaml, keeping file, line and column for every node.

Each file is read only up to MAX_FILE_BYTES and checked against the node, depth and tag
budgets (load.budget) before ruamel builds it; aliases and merge keys (`<<`) are then expanded,
duplicate keys are errors, and every value becomes a plain Python builtin.
"""

from __future__ import annotations

import datetime
from pathlib import Path as FsPath
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.constructor import ConstructorError, DuplicateKeyError, RoundTripConstructor
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.scalarbool import ScalarBoolean

from compiler.diagnostics import CompileError, Diagnostic, Span, fail
from compiler.load.budget import MAX_DEPTH, check_budget
from compiler.load.document import Path, SourceDocument

MAX_FILE_BYTES = 512 * 1024
"""Policy files are a few kilobytes; a larger one is refused without reading past this
(the round-trip loader needs about 1.5 s for 512 KiB of even the simplest YAML)."""


def policy_files(root: FsPath) -> list[FsPath]:
    """Every `*.yaml` / `*.yml` file below `root`, in a stable order."""
    found = [p for p in root.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file()]
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())


def display_path(path: FsPath) -> str:
    """The path to print for a file: relative to the working directory when below it."""
    try:
        return path.resolve().relative_to(FsPath.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def load_policies(root: FsPath) -> list[SourceDocument]:
    """Load every policy document below `root`, or raise CompileError with all load problems."""
    if not root.is_dir():
        raise fail("GF110", f"policy directory {root} does not exist", Span(str(root)))
    files = policy_files(root)
    if not files:
        raise fail("GF110", f"no *.yaml files below {root}", Span(display_path(root)))
    documents: list[SourceDocument] = []
    problems: list[Diagnostic] = []
    for path in files:
        origin = f"{root.resolve().name}/{path.relative_to(root).as_posix()}"
        try:
            _check_inside(path, root)
            documents.extend(load_file(path, display_path(path), origin))
        except CompileError as error:
            problems.extend(error.diagnostics)
    if problems:
        raise CompileError(problems)
    return documents


def _check_inside(path: FsPath, root: FsPath) -> None:
    """Refuse a policy file whose name is not UTF-8, or that links outside the policy directory.

    The name lands in every object's source annotation, which must be text; and diagnostics
    quote source lines, so following a link outside could print a file that is not policy
    (a CI secret, say) into a public log.
    """
    try:
        path.relative_to(root).as_posix().encode("utf-8")
    except UnicodeEncodeError:
        message = f"the file name {path.name!r} is not UTF-8"
        raise fail("GF109", message, Span(display_path(path), 1, 1), "rename the file") from None
    if not path.resolve().is_relative_to(root.resolve()):
        raise fail(
            "GF122",
            f"{display_path(path)} is a symlink to {path.resolve()}, outside {root}",
            Span(display_path(path)),
            "copy the file into the policy directory instead of linking to it",
        )


def load_file(path: FsPath, shown: str, origin: str) -> list[SourceDocument]:
    """Load one file's documents; empty documents are skipped."""
    start = Span(shown, 1, 1)
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
        if len(raw) > MAX_FILE_BYTES:
            message = f"file is larger than {MAX_FILE_BYTES} bytes"
            raise fail("GF120", message, start, "split the policy into smaller files")
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        message = f"file is not UTF-8 ({error.reason} at byte {error.start})"
        raise fail("GF109", message, start, "save the file as UTF-8") from None
    except OSError as error:
        raise fail("GF109", f"cannot read file: {error.strerror}", start) from None
    return parse_documents(text, shown, origin)


def parse_documents(text: str, shown: str, origin: str) -> list[SourceDocument]:
    """Parse YAML text (possibly several documents) into SourceDocuments."""
    check_budget(text, shown)
    yaml = YAML(typ="rt", pure=True)
    yaml.Constructor = _CheckedConstructor
    yaml.allow_duplicate_keys = False
    documents: list[SourceDocument] = []
    try:
        for index, raw in enumerate(yaml.load_all(text)):
            if raw is None:
                continue
            converter = _Converter(shown)
            position = getattr(raw, "lc", None)  # a tagged root scalar has one without a line
            if position is not None and position.line is not None:
                converter.spans[()] = Span(shown, position.line + 1, position.col + 1)
            data = converter.convert(raw, (), 0)
            documents.append(SourceDocument(shown, origin, index, data, converter.spans))
    except UnreadableValue as error:
        hint = "quote the value if it is meant as text"
        raise CompileError([_marked("GF107", error, shown, hint)]) from None
    except DuplicateKeyError as error:
        hint = "remove or rename one of the keys"
        raise CompileError([_marked("GF102", error, shown, hint)]) from None
    except MarkedYAMLError as error:
        code = "GF103" if "constructor" in (error.problem or "") else "GF101"
        hint = "check the YAML syntax near here"
        raise CompileError([_marked(code, error, shown, hint)]) from None
    except YAMLError as error:
        raise fail("GF101", str(error).strip(), Span(shown, 1, 1)) from None
    return documents


class _CheckedConstructor(RoundTripConstructor):
    """ruamel's round-trip constructor, with values it cannot build reported where they are.

    An integer of thousands of digits or a timestamp such as 2001-13-45 raises ValueError
    deep inside ruamel (and a huge hexadecimal integer cannot even be printed); here each
    becomes a located YAML error instead of a crash.
    """

    def construct_non_recursive_object(self, node: Any, tag: str | None = None) -> Any:
        try:
            data = super().construct_non_recursive_object(node, tag)
        except (ValueError, OverflowError) as error:
            kind = str(node.tag).rsplit(":", 1)[-1]
            problem = _OUT_OF_RANGE if kind == "int" else f"cannot read this {kind}: {error}"
            raise UnreadableValue(None, None, problem, node.start_mark) from None
        if isinstance(data, int) and not isinstance(data, bool) and abs(data) >= _INT_BOUND:
            raise UnreadableValue(None, None, _OUT_OF_RANGE, node.start_mark)
        return data


class UnreadableValue(ConstructorError):
    """A scalar that is well-formed YAML but not a value gpufleet can hold."""


_INT_BOUND = 2**63
_OUT_OF_RANGE = "integer out of range: policies use integers of at most 64 bits"


def _marked(code: str, error: MarkedYAMLError, shown: str, hint: str) -> Diagnostic:
    mark = error.problem_mark or error.context_mark
    line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    problem = " ".join(str(part) for part in (error.context, error.problem) if part)
    return Diagnostic(code, problem.strip() or "invalid YAML", Span(shown, line, column), (hint,))


class _Converter:
    """Turns a ruamel round-trip tree into builtins, recording a span for every node."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.spans: dict[Path, Span] = {}

    def _span(self, line: int, column: int) -> Span:
        return Span(self.file, line + 1, column + 1)

    def _at(self, path: Path) -> Span:
        return self.spans.get(path, Span(self.file, 1, 1))

    def convert(self, node: Any, path: Path, depth: int) -> Any:
        if depth > MAX_DEPTH:  # check_budget refused deeper files; this guards the recursion
            raise fail("GF120", f"nesting deeper than {MAX_DEPTH} levels", self._at(path))
        if isinstance(node, CommentedMap):
            return self._mapping(node, path, depth)
        if isinstance(node, CommentedSeq):
            return self._sequence(node, path, depth)
        return _scalar(node)

    def _mapping(self, node: CommentedMap, path: Path, depth: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key in node:
            if not isinstance(key, str | int | float | bool) or key is None:
                raise CompileError(
                    [
                        Diagnostic(
                            "GF107",
                            "mapping keys must be plain scalars",
                            self._span(node.lc.line, node.lc.col),
                        )
                    ]
                )
            name = key if isinstance(key, str) else str(_scalar(key)).lower()
            child = (*path, name)
            try:
                line, column = node.lc.value(key)
            except (KeyError, TypeError):
                line, column = node.lc.line, node.lc.col
            self.spans[child] = self._span(line, column)
            try:
                key_line, key_column = node.lc.key(key)
                self.spans[(*child, "<key>")] = self._span(key_line, key_column)
            except (KeyError, TypeError):
                pass
            result[name] = self.convert(node[key], child, depth + 1)
        return result

    def _sequence(self, node: CommentedSeq, path: Path, depth: int) -> list[Any]:
        result: list[Any] = []
        for index, item in enumerate(node):
            child = (*path, index)
            try:
                line, column = node.lc.item(index)
            except (KeyError, TypeError):
                line, column = node.lc.line, node.lc.col
            self.spans[child] = self._span(line, column)
            result.append(self.convert(item, child, depth + 1))
        return result


def _scalar(node: Any) -> Any:
    """A ruamel scalar as the plain builtin it stands for."""
    if node is None or isinstance(node, bool):
        return node
    if isinstance(node, ScalarBoolean):
        return bool(node)
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, str):
        return str(node)
    if isinstance(node, datetime.datetime | datetime.date):
        return node.isoformat()
    return str(node)
