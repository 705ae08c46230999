"""The shape of emit: every output family is one registered emitter of one signature, and
every file of out/ comes from exactly one of them (issue 19)."""

from __future__ import annotations

import inspect
import typing
from collections import defaultdict
from pathlib import Path

import pytest

from compiler.emit.manifest import Manifest
from compiler.emit.registry import EMITTERS
from compiler.emit.view import ClusterView
from compiler.pipeline import Compiled

OUT = Path(__file__).resolve().parents[1] / "out"
INDEXES = ("argocd/", "plan/", "report.md", ".gpufleet-owned")
"""What no emitter writes: Argo CD's files and the plans and report (fleet-wide indexes of
what the emitters wrote), besides each cluster's kustomization.yaml."""


def test_every_emitter_is_a_modules_emit_of_a_cluster_view() -> None:
    for emitter in EMITTERS:
        where = f"{emitter.__module__}.{emitter.__qualname__}"
        assert emitter.__name__ == "emit", where
        assert emitter.__module__.startswith("compiler.emit."), where
        parameters = list(inspect.signature(emitter).parameters.values())
        assert [p.name for p in parameters] == ["view"], where
        assert parameters[0].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD, where
        hints = typing.get_type_hints(emitter)
        assert hints == {"view": ClusterView, "return": list[Manifest]}, where


def test_every_family_is_registered_once() -> None:
    modules = [emitter.__module__ for emitter in EMITTERS]
    assert len(modules) == len(set(modules))


def _emitted(compiled: Compiled) -> dict[str, list[Manifest]]:
    """Every manifest each registered emitter writes for the example, by emitter module."""
    plan_of = {plan.cluster: plan for plan in compiled.plans}
    found: dict[str, list[Manifest]] = defaultdict(list)
    for cluster in compiled.fleet.clusters:
        view = ClusterView(cluster, compiled.fleet, plan_of[cluster.name])
        for emitter in EMITTERS:
            found[emitter.__module__] += emitter(view)
    return found


def test_every_file_in_out_comes_from_exactly_one_emitter(compiled_example: Compiled) -> None:
    writers: dict[str, list[str]] = defaultdict(list)
    for module, manifests in _emitted(compiled_example).items():
        for manifest in manifests:
            writers[manifest.path].append(module)
    committed = {path.relative_to(OUT).as_posix() for path in OUT.rglob("*") if path.is_file()}
    from_emitters = {
        path
        for path in committed
        if not path.startswith(INDEXES) and not path.endswith("/kustomization.yaml")
    }
    assert from_emitters, "the example writes objects"
    assert from_emitters == set(writers)
    assert {path: modules for path, modules in writers.items() if len(modules) != 1} == {}


def test_every_kind_comes_from_exactly_one_emitter(compiled_example: Compiled) -> None:
    emitters_of: dict[str, set[str]] = defaultdict(set)
    for module, manifests in _emitted(compiled_example).items():
        for manifest in manifests:
            emitters_of[manifest.kind].add(module)
    assert {"DeviceClass", "ResourceQuota", "ConfigMap"} <= set(emitters_of)
    assert {kind: found for kind, found in emitters_of.items() if len(found) != 1} == {}


def test_the_architecture_doc_has_a_row_per_emitter() -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "architecture.md").read_text()
    rows = {
        line.split("`")[1].removesuffix(".py")
        for line in doc.splitlines()
        if line.startswith("| `") and line.split("`")[1].endswith(".py")
    }
    assert rows == {emitter.__module__.removeprefix("compiler.emit.") for emitter in EMITTERS}


TEMPLATES = Path(__file__).resolve().parents[1] / "templates"
INDEX_MODULES = {"compiler.emit.argocd"}


def test_every_template_is_used_by_exactly_one_module() -> None:
    """Each template has one user, which writes a fleet-wide index: no emitter names a
    template (every object of a cluster has a direct builder), so the workers that compile
    clusters never need Jinja2 (per_cluster.warm_up compiles no template)."""
    emit = Path(__file__).resolve().parents[1] / "compiler" / "emit"
    sources = {f"compiler.emit.{path.stem}": path.read_text() for path in emit.glob("*.py")}
    users = {
        template.name: sorted(m for m, text in sources.items() if f'"{template.name}"' in text)
        for template in TEMPLATES.glob("*.j2")
    }
    assert users  # the glob found the templates
    assert {name: found for name, found in users.items() if len(found) != 1} == {}
    assert {name: found[0] for name, found in users.items() if found[0] not in INDEX_MODULES} == {}
    emitters = {e.__module__ for e in EMITTERS}
    assert {m for m, text in sources.items() if m in emitters and ".j2" in text} == set()


def test_a_family_has_one_template_or_one_direct_builder(compiled_example: Compiled) -> None:
    """A builder family (issue 20) names no template, writes each of its kinds with one
    builder, and the template it replaced is gone."""
    emit = Path(__file__).resolve().parents[1] / "compiler" / "emit"
    built = {
        module: manifests
        for module, manifests in _emitted(compiled_example).items()
        if any(manifest.builder is not None for manifest in manifests)
    }
    assert {"compiler.emit.namespace", "compiler.emit.resourcequota"} <= set(built)
    for module, manifests in built.items():
        assert all(m.builder is not None and not m.template for m in manifests), module
        kinds = {m.kind for m in manifests}
        assert all(len({m.builder for m in manifests if m.kind == k}) == 1 for k in kinds), module
        source = (emit / f"{module.removeprefix('compiler.emit.')}.py").read_text()
        assert ".j2" not in source, module
        for kind in kinds:
            assert not (TEMPLATES / f"{kind.lower()}.yaml.j2").exists(), (module, kind)


def test_a_manifest_needs_exactly_one_of_template_and_builder() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        Manifest(kind="Namespace", name="a", values={})
    with pytest.raises(ValueError, match="exactly one"):
        Manifest(kind="Namespace", name="a", values={}, template="x.j2", builder=lambda m: "")


def test_every_emitter_writes_one_kind_and_at_most_its_binding(
    compiled_example: Compiled,
) -> None:
    kinds = {
        module: {manifest.kind for manifest in manifests}
        for module, manifests in _emitted(compiled_example).items()
        if manifests
    }
    assert len(kinds) > 10
    for module, written in kinds.items():
        kind = min(written, key=len)  # a policy's name is its binding's without "Binding"
        assert written <= {kind, f"{kind}Binding"}, (module, written)
        named = module.removeprefix("compiler.emit.").replace("_", "")
        assert named.endswith(kind.lower()), (module, kind)  # named after the kind it writes
