"""One cluster's objects as a single YAML stream on stdout (`gpufleet render`, the Argo CD CMP)."""

from __future__ import annotations

from collections.abc import Mapping

import yaml


def cluster_stream(tree: Mapping[str, str], cluster: str) -> str:
    """The objects the cluster's kustomization.yaml lists, in its order, joined by `---`.

    This is what Argo CD would sync from out/clusters/<cluster>/, so a Config Management
    Plugin running `gpufleet render` and the rendered-manifests pattern deploy the same bytes.
    """
    prefix = f"clusters/{cluster}/"
    kustomization = yaml.safe_load(tree[f"{prefix}kustomization.yaml"])
    documents = [tree[prefix + resource] for resource in kustomization["resources"]]
    return "".join(f"---\n{text}" for text in documents)
