"""The docstrings written under the fields of the policy models, read from their source.

They are the one source of the JSON Schema's property descriptions. They are read only when a
schema is generated: pydantic's `use_attribute_docstrings` would parse every model's source at
import, on every compile (about 20 ms on a CI runner), for text only `gpufleet schema` prints.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap

from pydantic import BaseModel


def attribute_docstrings(model: type[BaseModel]) -> dict[str, str]:
    """The docstring under each field (`name: T = default` then a string) of `model` and of the
    models it inherits from, by field name, as prose: the lines of a paragraph joined."""
    found: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        if not (isinstance(cls, type) and issubclass(cls, BaseModel)) or cls is BaseModel:
            continue
        found.update(_own_docstrings(cls))
    return found


def _own_docstrings(cls: type) -> dict[str, str]:
    try:
        source = inspect.getsource(cls)
    except (OSError, TypeError):
        return {}
    body = ast.parse(textwrap.dedent(source)).body[0]
    if not isinstance(body, ast.ClassDef):
        return {}
    found = {}
    for field, after in zip(body.body, body.body[1:], strict=False):
        if (
            isinstance(field, ast.AnnAssign)
            and isinstance(field.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            found[field.target.id] = as_prose(after.value.value)
    return found


def as_prose(docstring: str) -> str:
    """A docstring with its indentation removed and each paragraph on one line, so an editor
    wraps it to its own width."""
    paragraphs = re.split(r"\n\s*\n", inspect.cleandoc(docstring))
    return "\n\n".join(" ".join(line.strip() for line in p.splitlines()) for p in paragraphs)
