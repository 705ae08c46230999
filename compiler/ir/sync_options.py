"""The Argo CD sync options gpufleet writes on what it emits, and what they mean when read back.

emit writes them (on Kueue objects, DeviceTaintRules and Namespaces); report reads them back
from out/ to tell what Argo CD keeps when an object leaves the policy. Both import the key and
the options from here, so the one that writes and the one that reads never disagree.
"""

from __future__ import annotations

SYNC_OPTIONS = "argocd.argoproj.io/sync-options"
"""The annotation Argo CD reads an object's sync options from (comma-separated)."""
NO_PRUNE = "Prune=false"
"""The sync option that keeps an object in the cluster when it leaves the synced tree."""
SKIP_DRY_RUN = {SYNC_OPTIONS: "SkipDryRunOnMissingResource=true"}
"""For objects whose API may not be served yet when Argo CD dry-runs the sync: Kueue's CRDs
(installed with Kueue) and DeviceTaintRule (an alpha or off-by-default API before 1.37)."""
KEEP_ON_REMOVAL = {SYNC_OPTIONS: f"Delete=false,{NO_PRUNE}"}
"""For Namespaces: Argo CD neither prunes one that leaves the policy nor deletes it with the
Application, since that would delete every workload in it. The Application shows it OutOfSync
(requires pruning) and the report says it leaves management; the platform deletes it by hand."""


def kept_on_removal(sync_options: str) -> bool:
    """Whether Argo CD keeps an object with these sync options (the annotation's value) when
    it leaves out/: it prunes none marked `Prune=false`."""
    return NO_PRUNE in sync_options.split(",")
