"""What emit produces: manifests to render, each with a path that is a pure function of it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from compiler.names import FILE_NAME_MAX, shortened

MANAGED_BY = {"app.kubernetes.io/managed-by": "gpufleet"}
SOURCE_ANNOTATION = "gpufleet.dev/source"
SYNC_WAVE = "argocd.argoproj.io/sync-wave"


@dataclass(frozen=True)
class Manifest:
    """One Kubernetes object (or kustomize/Argo CD file) to render: from its family's template
    or, for small fixed-shape objects where Jinja's per-render cost dominates, its family's
    direct builder (compiler/emit/yaml_writer.py); exactly one of the two."""

    kind: str
    name: str
    values: dict[str, Any]
    template: str = ""
    """The template's file name in templates/."""
    builder: Callable[[Manifest], str] | None = None
    """Writes the manifest's text itself, instead of a template."""
    cluster: str | None = None
    namespace: str | None = None
    directory: str = ""
    """Set for files outside out/clusters/<cluster>/ (e.g. `argocd`)."""
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if bool(self.template) == (self.builder is not None):
            raise ValueError(f"{self.kind} {self.name}: a template or a builder, exactly one")

    @cached_property
    def path(self) -> str:
        """Where the manifest lives below out/: a pure function of the object (a file name
        past the file system's limit, as a 253-character object name makes, is shortened)."""
        extension = ".yaml"
        file = shortened(f"{self.kind.lower()}_{self.name}", FILE_NAME_MAX - len(extension))
        file += extension
        if self.directory:
            return f"{self.directory}/{file}"
        return f"clusters/{self.cluster}/{self.namespace or '_cluster'}/{file}"

    @property
    def synced(self) -> bool:
        """Whether Argo CD syncs it to its cluster (listed in the cluster's kustomization):
        every object in out/clusters/<cluster>/<namespace or _cluster>/, nothing in a
        `directory` of its own (node config, Kueue config, Argo CD's own files)."""
        return not self.directory


@dataclass(frozen=True)
class NamedFile(Manifest):
    """A manifest whose file name is fixed by the tool that reads it (Argo CD's `plugin.yaml`,
    a kubelet drop-in's `.conf`, Kueue's `configuration.yaml`)."""

    file_name: str = ""

    @property
    def path(self) -> str:
        """`<directory>/<file_name>`."""
        return f"{self.directory}/{self.file_name}"


def provenance(origin: str, clause: str, wave: int | None = None) -> dict[str, str]:
    """Annotations naming the source file and clause (never a line) and the sync wave."""
    annotations = {SOURCE_ANNOTATION: f"{origin}#{clause}"}
    if wave is not None:
        annotations[SYNC_WAVE] = str(wave)
    return annotations
