"""The fleet's catalog: the built-in models plus the GpuModel documents of the policies.

Each document goes through the rules the built-in entries do (compiler.catalog.entries); a
broken one is GF250 and a name that is already another model's GF251, located in the
document, and the model is left out of the catalog (pools naming it are then GF201 too).
"""

from __future__ import annotations

from collections.abc import Sequence

from compiler.catalog import Catalog, GpuModel
from compiler.catalog.entries import checked_model
from compiler.diagnostics import Diagnostic, Problems
from compiler.model.gpu_model import GpuModel as GpuModelDocument


def fleet_catalog(
    catalog: Catalog, documents: Sequence[GpuModelDocument], problems: Problems
) -> Catalog:
    """`catalog` extended with every GPU model the policies describe without a problem."""
    added: list[GpuModel] = []
    for document in documents:
        model, found = checked_model(document.name, document.spec, [*catalog.models, *added])
        for problem in found:
            path = ("spec", *problem.path) if problem.path else ("metadata", "name")
            problems.append(
                Diagnostic(
                    "GF251" if problem.clash else "GF250",
                    f"GPU model {document.name!r}: {problem.message}",
                    document.source.span(path),
                    (problem.hint,),
                )
            )
        if not found:
            added.append(model)
    return catalog.extended(tuple(added))
