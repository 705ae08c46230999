"""Size bounds of what admission policies see: the request, and the objects gpufleet checks.

Every bound is one the API server enforces before validating admission runs (objects are
validated first), taken from k8s.io/api and apimachinery validation:
names are DNS subdomains (253) or labels (63), label keys qualified names (317), label
values 63; resource.k8s.io/v1 `DeviceRequestsMaxSize` 32, `FirstAvailableDeviceRequestMaxSize`
8, `DeviceTolerationsMaxLength` 16 (the v1beta1 flat request shape has the same fields one
level up). One bound is an assumption, because Kubernetes sets none: a pod's `containers`
and `initContainers` lists (`POD_CONTAINERS_ASSUMED`). A pod beyond it can at worst exceed
the runtime cost limit, which fails the request closed (failurePolicy: Fail denies it).
Maps such as labels and resource lists have no entry bound and may only be looked up.
"""

from __future__ import annotations

from compiler.cel.shapes import SCALAR, Shape, list_of, map_of, merge, record, string

DNS_SUBDOMAIN, DNS_LABEL, QUALIFIED_NAME, LABEL_VALUE = 253, 63, 317, 63
DEVICE_REQUESTS, SUBREQUESTS, DEVICE_TOLERATIONS = 32, 8, 16
POD_CONTAINERS_ASSUMED = 1_000
"""Containers (and, separately, init containers) a pod is assumed to have at most."""

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

_RESOURCE_LIST = map_of(string(QUALIFIED_NAME), string(DNS_LABEL))
_CONTAINER = record(
    name=string(DNS_LABEL),
    resources=record(requests=_RESOURCE_LIST, limits=_RESOURCE_LIST),
)
POD = record(
    metadata=METADATA,
    spec=record(
        containers=list_of(POD_CONTAINERS_ASSUMED, _CONTAINER),
        initContainers=list_of(POD_CONTAINERS_ASSUMED, _CONTAINER),
        priorityClassName=string(DNS_SUBDOMAIN),
        runtimeClassName=string(DNS_SUBDOMAIN),
    ),
)
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
