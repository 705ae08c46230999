"""`--format sarif`: the run's diagnostics as a SARIF 2.1.0 log, for code scanning.

One run of one tool. Each code the run reports is a rule (its page as helpUri, its severity
as default level; only those, so a code added elsewhere changes no log). Each diagnostic
with a place is a result located in the file relative to the repository root, as code
scanning resolves it against the checkout; the other clauses involved are related
locations; a warning the fleet suppressed is a result with an external suppression holding
the reason. A diagnostic about no file (a wrong command line) is a tool execution
notification instead, since a result must say where.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from compiler import PROJECT_URL, __version__
from compiler.diagnostics.codes import CODES, EXIT_INTERNAL, help_uri
from compiler.diagnostics.diagnostic import Diagnostic, Span, Suppressed

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
SOURCE_ROOT = "%SRCROOT%"
"""The uriBaseId of every location: the repository root, which code scanning knows."""


def artifact_uri(file: str, root: Path) -> str:
    """A file as a URI reference relative to the repository root (an absolute file: URI
    when it lies outside it), so results match the checkout on any machine."""
    path = Path(os.path.abspath(file))
    for candidate in (path, path.resolve()):  # the root is resolved; the path may not be
        if candidate.is_relative_to(root):
            return quote(candidate.relative_to(root).as_posix(), safe="/")
    return path.as_uri()


def _physical(span: Span, root: Path) -> dict[str, Any]:
    artifact = {"uri": artifact_uri(span.file, root), "uriBaseId": SOURCE_ROOT}
    if span.line <= 0:
        return {"artifactLocation": artifact}
    region = {"startLine": span.line, "startColumn": max(span.column, 1)}
    if span.end_line >= span.line and span.end_column > 0:
        region |= {"endLine": span.end_line, "endColumn": span.end_column + 1}
    return {"artifactLocation": artifact, "region": region}


def _message(diagnostic: Diagnostic) -> str:
    """The message and its hints: code scanning shows the message text only."""
    return "\n".join([diagnostic.message, *(f"hint: {hint}" for hint in diagnostic.hints)])


def _result(
    diagnostic: Diagnostic, span: Span, root: Path, rules: dict[str, int]
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": diagnostic.code,
        "ruleIndex": rules[diagnostic.code],
        "level": diagnostic.severity.value,
        "message": {"text": _message(diagnostic)},
        "locations": [{"physicalLocation": _physical(span, root)}],
    }
    if diagnostic.related:
        result["relatedLocations"] = [
            {"id": index, "message": {"text": note}, "physicalLocation": _physical(where, root)}
            for index, (note, where) in enumerate(diagnostic.related, start=1)
        ]
    scope = {"cluster": diagnostic.cluster, "team": diagnostic.team}
    if any(scope.values()):
        result["properties"] = {key: value for key, value in scope.items() if value}
    return result


def _rule(code: str) -> dict[str, Any]:
    entry = CODES[code]
    return {
        "id": code,
        "name": entry.name,
        "shortDescription": {"text": entry.summary},
        "helpUri": help_uri(code),
        "defaultConfiguration": {"level": entry.severity.value},
    }


def sarif_log(
    diagnostics: Sequence[Diagnostic],
    suppressed: Sequence[Suppressed],
    root: Path,
    exit_code: int,
) -> str:
    """The SARIF log as indented JSON text; `root` is the repository root locations are
    relative to."""
    codes = sorted({d.code for d in diagnostics} | {s.diagnostic.code for s in suppressed})
    rules = {code: index for index, code in enumerate(codes)}
    results = [_result(d, d.span, root, rules) for d in diagnostics if d.span is not None]
    for silenced in suppressed:
        assert silenced.diagnostic.span is not None, "only located warnings are suppressed"
        result = _result(silenced.diagnostic, silenced.diagnostic.span, root, rules)
        result["suppressions"] = [
            {
                "kind": "external",
                "status": "accepted",
                "justification": silenced.reason,
                "location": {"physicalLocation": _physical(silenced.span, root)},
            }
        ]
        results.append(result)
    notifications = [
        {
            "descriptor": {"id": d.code},
            "associatedRule": {"id": d.code, "index": rules[d.code]},
            "level": d.severity.value,
            "message": {"text": _message(d)},
        }
        for d in diagnostics
        if d.span is None
    ]
    invocation: dict[str, Any] = {
        "executionSuccessful": exit_code < EXIT_INTERNAL,
        "exitCode": exit_code,
    }
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    log = {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "gpufleet",
                        "semanticVersion": __version__,
                        "informationUri": PROJECT_URL,
                        "rules": [_rule(code) for code in codes],
                    }
                },
                "invocations": [invocation],
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"
