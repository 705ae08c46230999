"""Print the Kubernetes minors the e2e suite starts control planes of, one per line: the
versions of the example fleet's clusters. `make e2e` builds them first, with progress shown,
before pytest (which captures output) starts them."""

from __future__ import annotations

from pathlib import Path

from compiler.pipeline import check_policies

EXAMPLE = Path(__file__).resolve().parents[2] / "policies"


def needed() -> list[str]:
    """The distinct `kubernetesVersion`s of the example fleet, sorted."""
    fleet, _ = check_policies(EXAMPLE)
    return sorted({c.cluster.spec.kubernetes_version for c in fleet.clusters})


if __name__ == "__main__":
    print("\n".join(needed()))
