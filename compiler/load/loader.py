"""Read `policies/**/*.yaml` with ruamel.yaml, keeping file, line and column for every node.

Aliases are expanded (with a budget, so an alias bomb is refused rather than followed),
duplicate keys and custom tags are errors, and every value becomes a plain Python builtin.
"""

from __future__ import annotations

import datetime
from pathlib import Path as FsPath
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq, TaggedScalar
from ruamel.yaml.constructor import DuplicateKeyError
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.scalarbool import ScalarBoolean

from compiler.diagnostics import CompileError, Diagnostic, Span, fail
from compiler.load.document import Path, SourceDocument

MAX_NODES_PER_FILE = 200_000
"""More nodes than any real policy file has; a file past it is an alias bomb or a mistake."""

MAX_DEPTH = 64
"""Deeper nesting than the policy language ever needs."""

MAX_FILE_BYTES = 8 * 1024 * 1024
"""Policy files are small; a larger one is refused before it is parsed."""

_STANDARD_TAGS = frozenset(
    "tag:yaml.org,2002:" + name
    for name in ("map", "seq", "str", "int", "float", "bool", "null", "timestamp", "merge")
)


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
            documents.extend(load_file(path, display_path(path), origin))
        except CompileError as error:
            problems.extend(error.diagnostics)
    if problems:
        raise CompileError(problems)
    return documents


def load_file(path: FsPath, shown: str, origin: str) -> list[SourceDocument]:
    """Load one file's documents; empty documents are skipped."""
    start = Span(shown, 1, 1)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            message = f"file is {size} bytes, over the {MAX_FILE_BYTES} limit"
            raise fail("GF109", message, start, "split the policy into smaller files")
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as error:
        message = f"file is not UTF-8 ({error.reason} at byte {error.start})"
        raise fail("GF109", message, start, "save the file as UTF-8") from None
    except OSError as error:
        raise fail("GF109", f"cannot read file: {error.strerror}", start) from None
    return parse_documents(text, shown, origin)


def parse_documents(text: str, shown: str, origin: str) -> list[SourceDocument]:
    """Parse YAML text (possibly several documents) into SourceDocuments."""
    yaml = YAML(typ="rt", pure=True)
    yaml.allow_duplicate_keys = False
    documents: list[SourceDocument] = []
    try:
        for index, raw in enumerate(yaml.load_all(text)):
            if raw is None:
                continue
            converter = _Converter(shown)
            if hasattr(raw, "lc"):
                converter.spans[()] = Span(shown, raw.lc.line + 1, raw.lc.col + 1)
            data = converter.convert(raw, (), 0)
            documents.append(SourceDocument(shown, origin, index, data, converter.spans))
    except DuplicateKeyError as error:
        hint = "remove or rename one of the keys"
        raise CompileError([_marked("GF102", error, shown, hint)]) from None
    except MarkedYAMLError as error:
        code = "GF103" if "constructor" in (error.problem or "") else "GF101"
        hint = "check the YAML syntax near here"
        raise CompileError([_marked(code, error, shown, hint)]) from None
    except YAMLError as error:
        raise fail("GF101", str(error).strip(), Span(shown, 1, 1)) from None
    except RecursionError:
        raise fail("GF103", "YAML nesting is too deep", Span(shown, 1, 1)) from None
    return documents


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
        self.nodes = 0

    def _span(self, line: int, column: int) -> Span:
        return Span(self.file, line + 1, column + 1)

    def _at(self, path: Path) -> Span:
        return self.spans.get(path, Span(self.file, 1, 1))

    def convert(self, node: Any, path: Path, depth: int) -> Any:
        self.nodes += 1
        if self.nodes > MAX_NODES_PER_FILE:
            message = f"document expands to more than {MAX_NODES_PER_FILE} nodes"
            hint = "anchors and aliases that multiply are refused"
            raise fail("GF103", message, self._at(path), hint)
        if depth > MAX_DEPTH:
            raise fail("GF103", f"nesting deeper than {MAX_DEPTH} levels", self._at(path))
        self._check_tag(node, path)
        if isinstance(node, CommentedMap):
            return self._mapping(node, path, depth)
        if isinstance(node, CommentedSeq):
            return self._sequence(node, path, depth)
        return _scalar(node)

    def _check_tag(self, node: Any, path: Path) -> None:
        tag = getattr(node, "tag", None)
        value = getattr(tag, "value", tag) if tag is not None else None
        if isinstance(node, TaggedScalar) or (
            isinstance(value, str) and value and value not in _STANDARD_TAGS
        ):
            message = f"YAML tag {value or getattr(node, 'tag', '?')} is not allowed"
            hint = "policy files use plain YAML: remove the tag"
            raise fail("GF103", message, self._at(path), hint)

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
