"""Injection: hostile text in every free-text field that reaches out/ is emitted inert.

Each test compiles policies whose free text (PriorityClass descriptions, CEL selectors, the
Git repository URL and revision, policy file names that land in source annotations) holds
newlines, colons, `---`, quotes, `{{ }}` and `{% %}`, then parses every emitted file with
two YAML parsers (1.1 and 1.2) and compares it with the object built here independently.
Text that cannot be emitted inert (Go template braces in the ApplicationSet) is refused.
"""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from compiler.diagnostics import CompileError
from compiler.emit.yaml_safe import block, yaml_scalar
from compiler.pipeline import compile_policies
from compiler.validate import validate_object
from tests import fleets

HOSTILE = [
    "a\nb",
    "key: value",
    "--- !!python/object:os.system\n...",
    "'single' \"double\" `back`",
    "{{ 7 * 7 }} {{.path.basename}}",
    "{% for x in y %}{% endfor %}{# c #}",
    "# not a comment",
    "- item\n- item",
    "&anchor *alias !tag | > %",
    "yes",
    "null",
    "0o777",
    "1:30",
    " leading and trailing ",
    "tab\there",
    "\u2028\u0085\ufeff\u202e",
    "🚀 ß İ",
    "",
]
TEXT = st.text(max_size=200) | st.sampled_from(HOSTILE)
MANAGED = {"app.kubernetes.io/managed-by": "gpufleet"}


def load_both(text: str) -> list[Any]:
    """Parse with PyYAML (YAML 1.1) and ruamel (1.2); they must agree."""
    first = list(yaml.safe_load_all(text))
    second = list(YAML(typ="safe", pure=True).load_all(io.StringIO(text)))
    assert first == second, text
    return first


def dump(obj: dict[str, Any]) -> str:
    """Policy YAML written by ruamel's YAML 1.2 emitter (not gpufleet's), every string exact
    to gpufleet's YAML 1.2 loader (PyYAML would leave `0o7` plain, which 1.2 reads as 7)."""
    writer = YAML(typ="safe", pure=True)
    writer.width = 2**31
    writer.allow_unicode = True
    stream = io.StringIO()
    writer.dump(obj, stream)
    return stream.getvalue()


def cel_with(text: str) -> str:
    """A valid selector whose source holds `text` in a string literal and in comments."""
    literal = json.dumps(text, ensure_ascii=False)
    comments = "".join(f"// {line}\n" for line in text.splitlines() if line.strip())
    return f'device.driver == "gpu.nvidia.com" &&\n{comments}{literal} == {literal}'


def policies(root: Path, description: str, cel: str, file_name: str) -> None:
    root.mkdir(parents=True)
    (root / "c.yaml").write_text(
        fleets.cluster(
            pools="\n    - {name: l40s, nodes: 1, gpu: L40S, gpusPerNode: 4,"
            " hostMemory: 512Gi, cpu: 64}\n"
        )
    )
    tier = {
        "apiVersion": "gpufleet.dev/v1alpha1",
        "kind": "GpuTier",
        "metadata": {"name": "any"},
        "spec": {"select": {"cel": cel}},
    }
    (root / "t.yaml").write_text(dump(tier))
    (root / "team.yaml").write_text(fleets.team("a", "[{tier: any, guaranteed: 1}]"))
    ladder = {
        "apiVersion": "gpufleet.dev/v1alpha1",
        "kind": "PriorityLadder",
        "metadata": {"name": "l", "description": description[:1024]},
        "spec": {"levels": [{"name": "high", "value": 100, "description": description[:1024]}]},
    }
    (root / file_name).write_text(dump(ladder))
    fleets.write_tree(root, {})  # migrates the team


def expected_priority_class(description: str, origin: str) -> dict[str, Any]:
    expected: dict[str, Any] = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {
            "name": "high",
            "labels": MANAGED,
            "annotations": {
                "argocd.argoproj.io/sync-wave": "-3",
                "gpufleet.dev/source": f"{origin}#levels[high]",
            },
        },
        "value": 100,
        "preemptionPolicy": "PreemptLowerPriority",
        "globalDefault": False,
    }
    if description:
        expected["description"] = description
    return expected


def expected_device_class(cel: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {
            "name": "any",
            "labels": {"gpufleet.dev/tier": "any", **MANAGED},
            "annotations": {
                "argocd.argoproj.io/sync-wave": "-3",
                "gpufleet.dev/source": "policies/t.yaml#spec.select",
            },
        },
        "spec": {"selectors": [{"cel": {"expression": cel}}]},
    }


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    description=TEXT.filter(lambda s: len(s) <= 1024),
    cel_text=TEXT,
    file_stem=st.sampled_from(["ladder", "l: x", "--- {{ x }}", "'q\"", "a\nb", "%{% x %}#"]),
)
def test_hostile_free_text_is_emitted_as_inert_strings(
    description: str, cel_text: str, file_stem: str
) -> None:
    cel = cel_with(cel_text)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "policies"
        policies(root, description, cel, f"{file_stem}.yaml")
        tree = compile_policies(root).tree
    origin = f"policies/{file_stem}.yaml"
    compared = []
    for path, text in tree.items():
        if not path.endswith(".yaml"):
            continue
        documents = load_both(text)
        assert len(documents) == 1, path  # nothing injected a second document
        obj = documents[0]
        if path.endswith("priorityclass_high.yaml"):
            assert obj == expected_priority_class(description, origin)
            validate_object(obj, "1.36")
            compared.append(obj["kind"])
        elif path.endswith("deviceclass_any.yaml"):
            assert obj == expected_device_class(cel)
            validate_object(obj, "1.36")
            compared.append(obj["kind"])
        else:
            assert obj["kind"] == "Kustomization" or obj["metadata"]["annotations"]
    assert sorted(compared) == ["DeviceClass", "PriorityClass"]  # the hostile text was emitted


@pytest.mark.parametrize(
    "repo_url",
    [
        "https://git.example.com/a:b/'q\"#&*!|>%@c.git",
        "git@github.com:org/repo.git",
        "ssh://git@example.com:2222/x/y.git?ref=---#:x",
    ],
)
def test_repository_url_is_emitted_exactly(tmp_path: Path, repo_url: str) -> None:
    root = tmp_path / "policies"
    policies(root, "d", cel_with("x"), "ladder.yaml")
    fleet = {
        "apiVersion": "gpufleet.dev/v1alpha1",
        "kind": "Fleet",
        "metadata": {"name": "f"},
        "spec": {"gitops": {"repoURL": repo_url, "revision": "release/v1.2+build@x"}},
    }
    (root / "fleet.yaml").write_text(dump(fleet))
    tree = compile_policies(root).tree
    (project,) = load_both(tree["argocd/appproject_gpufleet.yaml"])
    (appset,) = load_both(tree["argocd/applicationset_gpufleet.yaml"])
    assert project["spec"]["sourceRepos"] == [repo_url]
    git = appset["spec"]["generators"][0]["git"]
    assert (git["repoURL"], git["revision"]) == (repo_url, "release/v1.2+build@x")
    source = appset["spec"]["template"]["spec"]["source"]
    assert (source["repoURL"], source["targetRevision"]) == (repo_url, "release/v1.2+build@x")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("repoURL", "https://x/{{.path.basename}}.git"),
        ("repoURL", "https://x/{{ printf `%s` `x` }}"),
        ("repoURL", "https://x/a\nb"),
        ("repoURL", "https://x/a b"),
        ("revision", "{{.path.path}}"),
        ("revision", "main\n---"),
        ("path", "../../elsewhere"),
        ("path", "/abs"),
    ],
)
def test_go_template_and_path_escapes_in_gitops_are_refused(
    tmp_path: Path, field: str, value: str
) -> None:
    # The ApplicationSet's template is a Go template to Argo CD: braces would run there.
    root = tmp_path / "policies"
    policies(root, "d", cel_with("x"), "ladder.yaml")
    gitops = {"repoURL": "https://x/y.git", field: value}
    fleet = {
        "apiVersion": "gpufleet.dev/v1alpha1",
        "kind": "Fleet",
        "metadata": {"name": "f"},
        "spec": {"gitops": gitops},
    }
    (root / "fleet.yaml").write_text(dump(fleet))
    with pytest.raises(CompileError) as caught:
        compile_policies(root)
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.code == "GF107"
    assert diagnostic.span is not None and Path(diagnostic.span.file).name == "fleet.yaml"


@settings(max_examples=300, deadline=None)
@given(value=st.text() | st.sampled_from(HOSTILE), indent=st.integers(0, 12))
def test_every_string_renders_as_itself(value: str, indent: int) -> None:
    for rendered in (yaml_scalar(value), block(value, indent + 2)):
        document = f"{' ' * indent}v: {rendered}\n"
        assert load_both(document) == [{"v": value}], document


@pytest.mark.parametrize(
    "name",
    ["a\nb", "a: b", "---", "'a'", '"a"', "{{ a }}", "{% a %}", "a/b", "../a", "a.b", "a" * 64],
)
@pytest.mark.parametrize("field", ["metadata.name", "namespace", "tier"])
def test_names_that_reach_paths_and_labels_are_refused(
    tmp_path: Path, name: str, field: str
) -> None:
    # Names become file names, label values and object names: only DNS-1123 labels pass.
    root = tmp_path / "policies"
    policies(root, "d", cel_with("x"), "ladder.yaml")
    team: dict[str, Any] = {
        "apiVersion": "gpufleet.dev/v1alpha1",
        "kind": "Team",
        "metadata": {"name": name if field == "metadata.name" else "a"},
        "spec": {
            "namespaces": [name if field == "namespace" else "a"],
            "quotas": [{"tier": name if field == "tier" else "any", "guaranteed": 1}],
        },
    }
    (root / "team.yaml").write_text(dump(team))
    with pytest.raises(CompileError) as caught:
        compile_policies(root)
    codes = {d.code for d in caught.value.diagnostics}
    assert codes == {"GF107"}, caught.value.diagnostics
