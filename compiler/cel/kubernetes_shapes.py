"""Size bounds of what admission policies see: the request, and the objects gpufleet checks.

Every bound is one the API server enforces before validating admission runs (objects are
validated first), taken from k8s.io/api and apimachinery validation:
names are DNS subdomains (253) or labels (63), label keys qualified names (317), label
values 63; resource.k8s.io/v1 `DeviceRequestsMaxSize` 32, `FirstAvailableDeviceRequestMaxSize`
8, `DeviceTolerationsMaxLength` 16 (the v1beta1 flat request shape has the same fields one
level up).

Some bounds are assumptions, because Kubernetes sets none: how many containers a pod has
(`POD_CONTAINERS_ASSUMED`, per list), how many entries a container's resource lists have
(`RESOURCE_LIST_ASSUMED`), how many variables its `env` sets (`CONTAINER_ENV_ASSUMED`), and
how many tolerations and claims a pod has (`POD_TOLERATIONS_ASSUMED`,
`POD_RESOURCE_CLAIMS_ASSUMED`).
The policies walk them nested (every key of every container's resources, every variable of
every container's env), so the bound that matters is their product, sized to keep each
expression under the API server's per-call limit. They are a guarantee, not a cutoff: a pod
within them is always evaluated; a pod beyond them is evaluated too unless its real cost
(far below the bound for real names, which are short) exceeds the runtime limit, and then
the request fails closed (failurePolicy: Fail denies it). Maps without an assumed bound
(labels) may only be looked up, never iterated; a string without one (an env var name) may
only be looked up or compared with `in`, never measured.
"""

from __future__ import annotations

from compiler.cel.value_bounds import SCALAR, Shape, list_of, map_of, merge, record, string

DNS_SUBDOMAIN, DNS_LABEL, QUALIFIED_NAME, LABEL_VALUE = 253, 63, 317, 63
DEVICE_REQUESTS, SUBREQUESTS, DEVICE_TOLERATIONS = 32, 8, 16
POD_CONTAINERS_ASSUMED = 100
"""Containers a pod is assumed to have at most in each of its lists (containers, init and
ephemeral containers): ten times what a crowded pod (app, sidecars, init steps) has."""
RESOURCE_LIST_ASSUMED = 16
"""Entries a container's `resources.requests` (and, separately, `.limits`) is assumed to
have at most: cpu, memory, ephemeral-storage, two hugepage sizes and a few extended
resources make about eight."""
CONTAINER_ENV_ASSUMED = 128
"""Variables a container's `env` is assumed to set at most: real containers set tens."""
POD_TOLERATIONS_ASSUMED = 64
"""Tolerations a pod is assumed to have at most: the defaults add two, real pods a few more."""
POD_RESOURCE_CLAIMS_ASSUMED = 32
"""Entries a pod's `resourceClaims` is assumed to have (only ever counted, never walked)."""

_KIND = record(group=string(DNS_SUBDOMAIN), version=string(DNS_LABEL), kind=string(DNS_SUBDOMAIN))
_RESOURCE = record(
    group=string(DNS_SUBDOMAIN), version=string(DNS_LABEL), resource=string(DNS_SUBDOMAIN)
)

REQUEST = record(
    kind=_KIND,
    requestKind=_KIND,
    resource=_RESOURCE,
    requestResource=_RESOURCE,
    subResource=string(DNS_SUBDOMAIN),
    requestSubResource=string(DNS_SUBDOMAIN),
    name=string(DNS_SUBDOMAIN),
    namespace=string(DNS_LABEL),
    operation=string(len("CONNECT")),
    dryRun=SCALAR,
)
"""`request` (kubernetes.AdmissionRequest; userInfo and options are left out: unused)."""

LABELS = map_of(string(QUALIFIED_NAME), string(LABEL_VALUE))
METADATA = record(
    name=string(DNS_SUBDOMAIN),
    generateName=string(DNS_SUBDOMAIN),
    namespace=string(DNS_LABEL),
    labels=LABELS,
)
NAMESPACE = record(metadata=METADATA)
"""`namespaceObject`."""

_TOLERATION = record(
    key=string(QUALIFIED_NAME),
    operator=string(len("Exists")),
    value=string(LABEL_VALUE),
    effect=string(len("NoSchedule")),
    tolerationSeconds=SCALAR,
)
_DEVICE_FIELDS = {
    "deviceClassName": string(DNS_SUBDOMAIN),
    "tolerations": list_of(DEVICE_TOLERATIONS, _TOLERATION),
    "allocationMode": string(len("ExactCount")),
    "count": SCALAR,
}
_SUBREQUEST = record(name=string(DNS_LABEL), **_DEVICE_FIELDS)
_EXACT = record(adminAccess=SCALAR, **_DEVICE_FIELDS)
_REQUEST = record(
    name=string(DNS_LABEL),
    exactly=_EXACT,
    firstAvailable=list_of(SUBREQUESTS, _SUBREQUEST),
    adminAccess=SCALAR,  # v1beta1: the device fields sit on the request itself
    **_DEVICE_FIELDS,
)
_CLAIM_SPEC = record(devices=record(requests=list_of(DEVICE_REQUESTS, _REQUEST)))

RESOURCE_CLAIM = record(metadata=METADATA, spec=_CLAIM_SPEC)
RESOURCE_CLAIM_TEMPLATE = record(
    metadata=METADATA, spec=record(metadata=METADATA, spec=_CLAIM_SPEC)
)

_ENV_NAME = Shape("string")
"""No length bound (any printable ASCII but `=`): only ever compared with `in`."""


def pod(
    containers: int = POD_CONTAINERS_ASSUMED,
    resource_entries: int = RESOURCE_LIST_ASSUMED,
    env: int = CONTAINER_ENV_ASSUMED,
) -> Shape:
    """A pod's bound under the given assumptions (`POD`: under gpufleet's)."""
    resource_list = map_of(string(QUALIFIED_NAME), string(DNS_LABEL), resource_entries)
    container = record(
        name=string(DNS_LABEL),
        resources=record(requests=resource_list, limits=resource_list),
        env=list_of(env, record(name=_ENV_NAME)),
    )
    return record(
        metadata=METADATA,
        spec=record(
            containers=list_of(containers, container),
            initContainers=list_of(containers, container),
            ephemeralContainers=list_of(containers, container),  # whose resources stay unset
            priorityClassName=string(DNS_SUBDOMAIN),
            runtimeClassName=string(DNS_SUBDOMAIN),
            nodeName=string(DNS_SUBDOMAIN),
            tolerations=list_of(POD_TOLERATIONS_ASSUMED, _TOLERATION),
            resourceClaims=list_of(
                POD_RESOURCE_CLAIMS_ASSUMED,
                record(
                    name=string(DNS_LABEL),
                    resourceClaimName=string(DNS_SUBDOMAIN),
                    resourceClaimTemplateName=string(DNS_SUBDOMAIN),
                ),
            ),
        ),
    )


POD = pod()
KUEUE_WORKLOAD = record(
    metadata=METADATA,
    spec=record(
        priorityClassName=string(DNS_SUBDOMAIN),  # v1beta1
        priorityClassRef=record(name=string(DNS_SUBDOMAIN)),  # v1beta2
    ),
)
ANY_OBJECT = record(metadata=METADATA)
"""What any object has: metadata (a wildcard rule may match every kind)."""


def union(*shapes: Shape) -> Shape:
    """A bound for `object` when a policy matches several kinds."""
    merged: Shape | None = None
    for shape in shapes:
        merged = merge(merged, shape)
    assert merged is not None
    return merged
