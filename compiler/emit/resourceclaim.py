"""ResourceClaims whose devices several pods share (a team's `sharedClaims`).

Pods of a ResourceClaimTemplate each get a claim of their own, so they never share a device;
pods that name one ResourceClaim (`resourceClaimName`) all get its devices. Such a claim asks
for its tier's DeviceClass, tolerates the device taints its team may tolerate and carries the
tier's sharing configuration, like the tier's templates; it counts against the namespace's
device quota for as long as it exists, used or not. Its spec is immutable: a claim whose
policy changes must get a new name (Argo CD cannot update it in place).
"""

from __future__ import annotations

from compiler.emit.manifest import Manifest, provenance
from compiler.emit.resourceclaimtemplate import REQUEST, claim_devices, sharing_config
from compiler.emit.view import ClusterView
from compiler.emit.waves import WAVES
from compiler.emit.yaml_writer import object_yaml
from compiler.ir import TEAM_LABEL, TIER_LABEL
from compiler.ir.claims import cluster_tolerations
from compiler.ir.shared_claims import shared_claims


def emit(view: ClusterView) -> list[Manifest]:
    """A ResourceClaim per shared claim the cluster gets."""
    cluster = view.cluster
    row = cluster.target
    manifests = []
    for placed in shared_claims(cluster):
        claim, team = placed.claim, placed.team
        tier = cluster.tier(claim.tier)
        tolerations = [
            t.model_dump(by_alias=True, exclude_none=True)
            for t in cluster_tolerations(cluster, team.spec.tolerations)
        ]
        config = sharing_config(tier, REQUEST, cluster.cluster.spec.driver)
        manifests.append(
            Manifest(
                kind="ResourceClaim",
                name=claim.name,
                builder=build,
                values={
                    "api_version": row.dra_api,
                    "flat": row.flat_requests,
                    "alternatives": [tier.name],
                    "count": claim.devices,
                    "tolerations": tolerations,
                    "match_attribute": None,
                    "configs": [config] if config else [],
                },
                cluster=cluster.name,
                namespace=placed.namespace,
                labels={TEAM_LABEL: team.name, TIER_LABEL: tier.name},
                annotations=provenance(
                    team.source.origin, f"sharedClaims[{claim.name}]", WAVES["ResourceClaim"]
                ),
            )
        )
    return manifests


def build(manifest: Manifest) -> str:
    """A shared ResourceClaim's YAML: the spec a template of its tier would give its claims
    (resourceclaimtemplate.claim_devices), for one class and without a gang's constraint."""
    spec = {"devices": claim_devices(manifest.values)}
    return object_yaml(manifest.values["api_version"], manifest, {"spec": spec})
