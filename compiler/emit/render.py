"""Render manifests through the Jinja2 templates, every interpolation made YAML-safe."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import jinja2

from compiler.emit.manifest import Manifest
from compiler.emit.yaml_safe import Block, finalize, yaml_scalar
from compiler.emit.yaml_writer import metadata_yaml
from compiler.template_files import templates_dir

_PRINTABLE_LINES = re.compile(r"^[ -~\n]*$")
_TRAILING_SPACE = re.compile(r" (\n|$)")


def block(text: str, indent: int, single_line_too: bool = False) -> str:
    """Multi-line text as a literal block at `indent`, or a quoted scalar if it must be.

    `|-` when the text has no final line break, `|` when it has exactly one; anything a
    literal block cannot hold exactly (more final breaks, trailing spaces, tabs, non-ASCII,
    a leading space) is quoted instead. `single_line_too` writes one-line text as a block as
    well (CEL reads better unquoted).
    """
    ends_with_break = text.endswith("\n")
    lines = (text[:-1] if ends_with_break else text).split("\n")
    readable = _PRINTABLE_LINES.match(text) is not None and _TRAILING_SPACE.search(text) is None
    one_line = len(lines) == 1 and not single_line_too
    if one_line or not readable or not lines[0] or lines[0][0] == " " or not lines[-1]:
        return Block(yaml_scalar(text))
    pad = " " * indent
    chomping = "" if ends_with_break else "-"
    return Block(f"|{chomping}\n" + "\n".join(pad + line if line else "" for line in lines))


@cache
def environment() -> jinja2.Environment:
    """The one Jinja2 environment: strict undefined, and `finalize` quoting every value."""
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
