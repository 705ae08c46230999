"""Render manifests: by their family's direct builder, or through a Jinja2 template (Argo CD's
fleet-wide files), every interpolation made YAML-safe."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from compiler.emit.manifest import Manifest
from compiler.emit.yaml_safe import block, finalize
from compiler.emit.yaml_writer import metadata_yaml
from compiler.template_files import templates_dir

if TYPE_CHECKING:
    import jinja2


@cache
def environment() -> jinja2.Environment:
    """The one Jinja2 environment: strict undefined, and `finalize` quoting every value.
    Jinja2 is imported here, at the first template render: only Argo CD's files (written
    once a fleet) have templates, so a fleet without them never imports it (a twentieth of
    gpufleet's start-up), nor does any worker that compiles clusters."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates_dir()),
        auto_reload=False,  # templates do not change while gpufleet runs: no stat per render
        undefined=jinja2.StrictUndefined,
        finalize=finalize,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["block"] = block
    return env


def render(manifest: Manifest) -> str:
    """The YAML text of one manifest: its family's direct builder's, else its template's."""
    if manifest.builder is not None:
        return manifest.builder(manifest)
    metadata = metadata_yaml(manifest)
    return render_template(manifest.template, metadata=metadata, **manifest.values)


def render_template(name: str, **values: Any) -> str:
    """The text of one template (also for documents embedded in others, e.g. a ConfigMap's)."""
    return environment().get_template(name).render(**values)
