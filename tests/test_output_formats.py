"""Output formats (issue 18): `--format json` writes one versioned document to stdout that
validates against docs/diagnostics.schema.json, `--format sarif` a SARIF 2.1.0 log that
validates against the official schema (tests/schemas), `--strict` makes warnings fail the
run, and the exit codes README.md documents are the code's."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from compiler.diagnostics.codes import CODES, EXIT_CODES, help_uri
from compiler.diagnostics.document import SCHEMA_VERSION, diagnostics_schema_text
from tests.conftest import EXAMPLE, REPO, PolicyWriter
from tests.test_cli import Run
from tests.test_suppressions import policies

CASES = REPO / "tests" / "cli_cases"
SARIF_SCHEMA = json.loads((REPO / "tests" / "schemas" / "sarif-schema-2.1.0.json").read_text())
DIAGNOSTICS_SCHEMA = json.loads((REPO / "docs" / "diagnostics.schema.json").read_text())


def sarif_valid(log: dict[str, Any]) -> dict[str, Any]:
    """The log, after checking it against the SARIF 2.1.0 schema (draft-04)."""
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    return log


def document_valid(document: dict[str, Any]) -> dict[str, Any]:
    """The document, after checking it against docs/diagnostics.schema.json."""
    jsonschema.Draft202012Validator(DIAGNOSTICS_SCHEMA).validate(document)
    return document


def test_the_documented_diagnostics_schema_is_the_models() -> None:
    assert (REPO / "docs" / "diagnostics.schema.json").read_text() == diagnostics_schema_text()


def test_the_vendored_sarif_schema_is_the_oasis_2_1_0_schema() -> None:
    jsonschema.Draft4Validator.check_schema(SARIF_SCHEMA)
    assert SARIF_SCHEMA["id"].endswith("/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json")
    assert SARIF_SCHEMA["properties"]["version"]["enum"] == ["2.1.0"]


def test_json_is_one_document_on_stdout_with_text_on_stderr(
    run_cli: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(CASES / "infeasible")
    code, out, err = run_cli("check", "--policies", "policies", "--format", "json")
    document = document_valid(json.loads(out))
    assert code == 1 and err == ""
    assert document["schemaVersion"] == SCHEMA_VERSION
    (found,) = document["diagnostics"]
    assert found["code"] == "GF401" and found["severity"] == "error"
    assert (
        found["location"]["file"] == "policies/grants/research.yaml"
        and found["location"]["line"] > 0
    )
    assert found["related"] and all(r["location"]["line"] > 0 for r in found["related"])
    assert found["helpUri"] == help_uri("GF401")
    assert document["summary"] == {
        "errors": 1,
        "warnings": 0,
        "suppressed": 0,
        "strict": False,
        "exitCode": 1,
    }


def test_json_of_a_passing_run_is_an_empty_document_and_the_ok_line_on_stderr(
    run_cli: Run,
) -> None:
    code, out, err = run_cli("check", "--policies", EXAMPLE, "--format", "json")
    document = document_valid(json.loads(out))
    assert code == 0 and err.splitlines()[-1].startswith("ok: ")
    assert document["summary"]["errors"] == 0 and document["summary"]["exitCode"] == 0


def test_a_usage_error_is_a_document_too(run_cli: Run) -> None:
    code, out, _ = run_cli("check", "--solver-time-limit", "soon", "--format", "json")
    (found,) = document_valid(json.loads(out))["diagnostics"]
    assert code == 2 and found["code"] == "GF113" and found["location"] is None


def test_sarif_validates_and_locates_results_from_the_repository_root(
    run_cli: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(CASES / "infeasible")
    code, out, _ = run_cli("check", "--policies", "policies", "--format", "sarif")
    log = sarif_valid(json.loads(out))
    assert code == 1 and log["version"] == "2.1.0"
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "gpufleet"
    assert [r["id"] for r in driver["rules"]] == ["GF401"]
    assert driver["rules"][0]["helpUri"].endswith("/docs/diagnostics/GF401.md")
    assert driver["rules"][0]["defaultConfiguration"] == {"level": "error"}
    (result,) = run["results"]
    assert result["ruleId"] == "GF401" and result["level"] == "error"
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {
        "uri": "tests/cli_cases/infeasible/policies/grants/research.yaml",
        "uriBaseId": "%SRCROOT%",
    }
    assert location["region"]["startLine"] >= 1 and location["region"]["startColumn"] >= 1
    related = result["relatedLocations"]
    assert related and all(r["physicalLocation"]["region"]["startLine"] >= 1 for r in related)
    assert run["invocations"] == [{"executionSuccessful": True, "exitCode": 1}]


def test_sarif_of_a_usage_error_is_a_notification(run_cli: Run) -> None:
    code, out, _ = run_cli("check", "--solver-time-limit", "soon", "--format", "sarif")
    (run,) = sarif_valid(json.loads(out))["runs"]
    (notification,) = run["invocations"][0]["toolExecutionNotifications"]
    assert code == 2 and run["results"] == []
    assert notification["descriptor"]["id"] == "GF113" and notification["level"] == "error"


def test_suppressed_warnings_are_sarif_results_with_their_reason(
    write_policies: PolicyWriter, run_cli: Run
) -> None:
    root = policies(write_policies, "    - {code: GF217, cluster: c1, reason: RMA 4711 open}\n")
    code, out, _ = run_cli("check", "--policies", root, "--format", "sarif")
    (run,) = sarif_valid(json.loads(out))["runs"]
    by_rule = {r["ruleId"]: r for r in run["results"]}
    assert code == 0 and set(by_rule) == {"GF211", "GF217"}
    assert "suppressions" not in by_rule["GF211"]
    (suppression,) = by_rule["GF217"]["suppressions"]
    assert suppression["kind"] == "external" and suppression["justification"] == "RMA 4711 open"
    place = suppression["location"]["physicalLocation"]
    assert place["artifactLocation"]["uri"].endswith("fleet.yaml")
    assert by_rule["GF217"]["properties"] == {"cluster": "c1"}
    code, out, _ = run_cli("check", "--policies", root, "--format", "json")
    document = document_valid(json.loads(out))
    (silenced,) = document["suppressed"]
    assert silenced["code"] == "GF217" and silenced["reason"] == "RMA 4711 open"
    assert silenced["cluster"] == "c1" and silenced["suppressedBy"]["line"] == 7
    assert [d["code"] for d in document["diagnostics"]] == ["GF211"]


def test_strict_fails_a_run_with_warnings_and_says_no_ok(
    write_policies: PolicyWriter, run_cli: Run, tmp_path: Path
) -> None:
    root = policies(write_policies, "    []\n")
    assert run_cli("check", "--policies", root)[0] == 0
    code, out, err = run_cli("check", "--policies", root, "--strict")
    assert code == 1 and "ok:" not in out and "--strict" in err and "[GF211]" in err
    out_dir = tmp_path / "out"
    code, _, _ = run_cli("compile", "--policies", root, "--out", out_dir, "--strict")
    assert code == 1 and not out_dir.exists()
    code, out, _ = run_cli("check", "--policies", root, "--strict", "--format", "json")
    assert code == 1 and json.loads(out)["summary"] == {
        "errors": 0,
        "warnings": 2,
        "suppressed": 0,
        "strict": True,
        "exitCode": 1,
    }


def test_strict_passes_a_run_whose_warnings_are_all_suppressed(
    write_policies: PolicyWriter, run_cli: Run, tmp_path: Path
) -> None:
    root = policies(
        write_policies,
        "    - {code: GF211, reason: spare tier for the next purchase}\n"
        "    - {code: GF217, reason: RMA 4711 open}\n",
    )
    code, out, err = run_cli("check", "--policies", root, "--strict")
    assert code == 0 and out.startswith("ok: ") and err == ""
    code, _, _ = run_cli("compile", "--policies", root, "--out", tmp_path / "out", "--strict")
    assert code == 0 and (tmp_path / "out" / "report.md").is_file()


@pytest.mark.parametrize("command", ["diff", "report", "render", "explain"])
def test_commands_whose_stdout_is_their_product_take_no_document_format(
    run_cli: Run, command: str
) -> None:
    code, out, _ = run_cli(command, "--policies", EXAMPLE, "--format", "json")
    (found,) = json.loads(out)["diagnostics"]
    assert code == 2 and found["code"] == "GF113" and "--format" in found["message"]


def test_the_readme_documents_every_exit_code() -> None:
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("### Exit codes") :]
    rows = re.findall(r"^\| (\d+) \| (.+) \|$", section.split("\n\n")[1], re.MULTILINE)
    assert {int(code): meaning for code, meaning in rows} == EXIT_CODES
    assert {c.exit_code for c in CODES.values()} <= set(EXIT_CODES)
