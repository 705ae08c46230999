"""Print what the e2e suite runs, one per line, so that `make e2e` builds it first with
progress shown, before pytest (which captures output) starts it: the Kubernetes minors of the
example fleet's clusters and the one the suite retargets an example cluster to, or with
`--kueue` every Kueue minor gpufleet supports."""

from __future__ import annotations

import sys

from compiler.kueue_versions import KUEUE_RELEASES
from compiler.pipeline import check_policies
from tests.e2e.policies import EXAMPLE, RETARGETED_VERSION


def needed() -> list[str]:
    """The distinct `kubernetesVersion`s of the example fleet and the retargeted cluster's
    (tests/e2e/test_kubernetes_137.py), sorted."""
    fleet, _ = check_policies(EXAMPLE)
    versions = {c.cluster.spec.kubernetes_version for c in fleet.clusters}
    return sorted(versions | {RETARGETED_VERSION})


if __name__ == "__main__":
    print("\n".join(sorted(KUEUE_RELEASES) if sys.argv[1:] == ["--kueue"] else needed()))
