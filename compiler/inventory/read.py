"""Read a cluster dump (`kubectl get nodes,resourceslices,devicetaintrules -o yaml`) into a
`ClusterDump`, through the policy loader's hardened YAML reading (budgets, no tags, no alias
bombs, positions on every node).

A dump is a `kind: List` (what kubectl prints for several kinds), a single object, or several
YAML documents of either. Nodes (v1), ResourceSlices (resource.k8s.io v1beta1, v1beta2, v1) and
DeviceTaintRules (v1alpha3, v1beta2, v1) are read; any other item is skipped with a warning
(GF803). A broken object is a located error (GF802) and the rest is still read, so one run
lists every problem; nothing is returned unless the whole dump reads.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from fractions import Fraction
from pathlib import Path

from compiler.diagnostics import CompileError, Diagnostic, Problems, Span, fail
from compiler.inventory.dump import (
    AttributeValue,
    ClusterDump,
    CounterConsumption,
    CounterSet,
    Device,
    DeviceTaintRule,
    Node,
    ResourceSlice,
    Taint,
    Version,
)
from compiler.inventory.fields import Cursor, FieldError
from compiler.load.document import SourceDocument
from compiler.load.loader import parse_documents

MAX_DUMP_BYTES = 64 * 2**20
"""A dump larger than this is refused unread past it: about 1,000 GPU nodes with their
slices as kubectl prints them (managed fields left out, its default)."""
MAX_DUMP_NODES = 1_500_000
"""YAML nodes per dump, aliases expanded (a policy file's budget is 10,000): about the same
1,000 GPU nodes, and a few seconds of reading."""

RESOURCE_GROUP = "resource.k8s.io"
SLICE_VERSIONS = ("v1beta1", "v1beta2", "v1")
"""ResourceSlice versions read; v1beta1 wraps a device's attributes and capacity in `basic`."""
TAINT_RULE_VERSIONS = ("v1alpha3", "v1beta2", "v1")
STDIN = "-"


def read_dump(source: str) -> tuple[ClusterDump, list[Diagnostic]]:
    """The dump in file `source` (`-`: standard input) and the warnings found reading it;
    raises CompileError with every error (GF1xx for YAML, GF801/GF802 for its objects)."""
    shown = "<stdin>" if source == STDIN else source
    text = _read_text(source, shown)
    try:
        documents = parse_documents(text, shown, shown, MAX_DUMP_NODES)
    except CompileError as error:
        raise Problems(_for_dump(d) for d in error.diagnostics).error() from None
    return parse_dump(documents, shown)


def _read_text(source: str, shown: str) -> str:
    start = Span(shown, 1, 1)
    try:
        if source == STDIN:
            raw = sys.stdin.buffer.read(MAX_DUMP_BYTES + 1)
        else:
            with Path(source).open("rb") as handle:
                raw = handle.read(MAX_DUMP_BYTES + 1)
    except OSError as error:
        raise fail("GF109", f"cannot read the dump: {error.strerror}", start) from None
    if len(raw) > MAX_DUMP_BYTES:
        raise fail(
            "GF120",
            f"the dump is larger than {MAX_DUMP_BYTES} bytes",
            start,
            "dump only what import reads: kubectl get nodes,resourceslices,devicetaintrules -o "
            "yaml (managed fields left out)",
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        message = f"the dump is not UTF-8 ({error.reason} at byte {error.start})"
        raise fail("GF109", message, start, "kubectl writes UTF-8: dump it again") from None


def _for_dump(diagnostic: Diagnostic) -> Diagnostic:
    """A loader diagnostic with hints about a dump rather than a policy file."""
    if diagnostic.code != "GF120":
        return diagnostic
    hint = "a dump is what kubectl printed, unedited; split a very large fleet's dump by node"
    return Diagnostic(diagnostic.code, diagnostic.message, diagnostic.span, (hint,))


def parse_dump(documents: list[SourceDocument], shown: str) -> tuple[ClusterDump, list[Diagnostic]]:
    """The `ClusterDump` of loaded documents, and the warnings (see `read_dump`)."""
    problems = Problems()
    nodes: list[Node] = []
    slices: list[ResourceSlice] = []
    rules: list[DeviceTaintRule] = []
    readers: dict[str, Callable[[Cursor, str], None]] = {
        "Node": lambda c, v: nodes.append(_node(c)),
        "ResourceSlice": lambda c, v: slices.append(_slice(c, v)),
        "DeviceTaintRule": lambda c, v: rules.append(_taint_rule(c, v)),
    }
    for cursor in _objects(documents, problems):
        try:
            kind, version = _kind(cursor)
            if kind in readers and _served(kind, version):
                readers[kind](cursor, version)
            else:
                problems.append(_ignored(cursor, kind, version))
        except FieldError as error:
            problems.append(error.diagnostic)
    problems.extend(_duplicates(nodes, slices, rules))
    problems.raise_if_errors()
    dump = ClusterDump(
        file=shown,
        nodes=tuple(sorted(nodes, key=lambda n: n.name)),
        slices=tuple(sorted(slices, key=lambda s: (s.driver, s.pool, s.name))),
        taint_rules=tuple(sorted(rules, key=lambda r: r.name)),
    )
    return dump, problems.warnings


def _objects(documents: list[SourceDocument], problems: Problems) -> Iterator[Cursor]:
    """A cursor on every object of the dump: the items of each List, or the document itself."""
    for document in documents:
        data = document.data
        if not isinstance(data, dict):
            problems.append(
                Diagnostic(
                    "GF801",
                    "this document is not a Kubernetes object or List",
                    document.span(),
                    ("dump with `kubectl get nodes,resourceslices,devicetaintrules -o yaml`",),
                )
            )
            continue
        if data.get("kind") != "List" and not str(data.get("kind", "")).endswith("List"):
            yield Cursor(document, (), "object")
            continue
        items = data.get("items")
        if items is None:
            continue  # `kubectl get` of nothing prints an empty List
        if not isinstance(items, list):
            problems.append(
                Diagnostic("GF801", "`items` of a List is not a list", document.span(("items",)))
            )
            continue
        yield from (Cursor(document, ("items", i), f"items[{i}]") for i in range(len(items)))


def _kind(cursor: Cursor) -> tuple[str, str]:
    """The object's kind and its API version (`v1`, `v1beta1`...); its group must be the one
    the kind lives in."""
    if not isinstance(cursor.value(), dict):
        raise FieldError(
            Diagnostic(
                "GF801",
                f"{cursor.what} is not a Kubernetes object (a mapping with apiVersion and kind)",
                cursor.document.span(cursor.path),
            )
        )
    kind = cursor.text("kind") or ""
    api_version = cursor.text("apiVersion") or ""
    group, _, version = api_version.rpartition("/")
    expected = "" if kind == "Node" else RESOURCE_GROUP
    if kind in ("Node", "ResourceSlice", "DeviceTaintRule") and group != expected:
        return f"{kind} of {api_version}", version
    return kind, version


def _served(kind: str, version: str) -> bool:
    if kind == "ResourceSlice":
        return version in SLICE_VERSIONS
    if kind == "DeviceTaintRule":
        return version in TAINT_RULE_VERSIONS
    return version == "v1"


def _ignored(cursor: Cursor, kind: str, version: str) -> Diagnostic:
    """GF803 for an object import does not read."""
    return Diagnostic(
        "GF803",
        f"{cursor.what}: {kind} ({version or 'no version'}) is not read: it is skipped",
        cursor.document.span(cursor.path),
        (
            "import reads Nodes (v1), ResourceSlices (resource.k8s.io v1beta1, v1beta2, v1) "
            "and DeviceTaintRules (v1alpha3, v1beta2, v1)",
        ),
    )


def _named(cursor: Cursor, kind: str) -> Cursor:
    """The cursor, described by its kind and name for messages."""
    cursor.mapping("metadata", required=True)
    name = cursor.at("metadata").text("name")
    return Cursor(cursor.document, cursor.path, f"{kind} {name}")


def _taints(cursor: Cursor, key: str) -> tuple[Taint, ...]:
    return tuple(
        Taint(t.text("key") or "", t.text("value", required=False) or "", t.text("effect") or "")
        for t in cursor.items(key)
    )


def _node(cursor: Cursor) -> Node:
    cursor = _named(cursor, "Node")
    metadata, status = cursor.at("metadata"), cursor.at("status")
    has_status = isinstance(cursor.value().get("status"), dict)
    conditions = status.items("conditions") if has_status else []
    ready = any(
        c.text("type") == "Ready" and c.text("status", required=False) == "True" for c in conditions
    )
    info = status.at("nodeInfo")
    has_info = has_status and isinstance(status.value().get("nodeInfo"), dict)
    return Node(
        name=metadata.text("name") or "",
        labels=metadata.strings("labels"),
        capacity=status.quantities("capacity") if has_status else {},
        allocatable=status.quantities("allocatable") if has_status else {},
        ready=ready,
        taints=_taints(cursor.at("spec"), "taints") if _has(cursor, "spec") else (),
        kubelet_version=info.text("kubeletVersion", required=False) if has_info else None,
        span=cursor.document.span(cursor.path),
    )


def _has(cursor: Cursor, key: str) -> bool:
    return cursor.get(key, dict, required=False) is not None


def _qualified(driver: str, name: str) -> str:
    """An attribute or capacity name as the scheduler reads it: unqualified names are in the
    driver's domain."""
    return name if "/" in name else f"{driver}/{name}"


def _attribute(cursor: Cursor) -> AttributeValue:
    """A DeviceAttribute: exactly one of int, bool, string, version."""
    node = cursor.value()
    if not isinstance(node, dict):
        raise cursor.problem("an attribute is a mapping with one of int, bool, string, version")
    present = [k for k in ("int", "bool", "string", "version") if node.get(k) is not None]
    if len(present) != 1:
        raise cursor.problem(
            "an attribute has exactly one of int, bool, string, version "
            f"(found {', '.join(present) or 'none'})"
        )
    kind = present[0]
    if kind == "int":
        return cursor.whole("int")
    if kind == "bool":
        found: bool = cursor.get("bool", bool)
        return found
    if kind == "version":
        return Version(cursor.text("version"))
    return cursor.text("string") or ""


def _capacity(cursor: Cursor) -> Fraction:
    """A DeviceCapacity or Counter: `{value: <quantity>}`."""
    if not isinstance(cursor.value(), dict):
        raise cursor.problem("a capacity is a mapping with `value`")
    cursor.get("value", object)
    return cursor.at("value").quantity()


def _device(cursor: Cursor, driver: str, version: str) -> Device:
    name = cursor.text("name") or ""
    body = cursor.at("basic") if version == "v1beta1" else cursor
    if version == "v1beta1" and not _has(cursor, "basic"):
        body = cursor  # a v1beta1 device without `basic` has no attributes: read what is there
    attributes = {
        _qualified(driver, key): _attribute(body.at("attributes", key))
        for key in body.mapping("attributes")
    }
    capacity = {
        _qualified(driver, key): _capacity(body.at("capacity", key))
        for key in body.mapping("capacity")
    }
    consumes = tuple(
        CounterConsumption(
            c.text("counterSet") or "",
            {k: _capacity(c.at("counters", k)) for k in c.mapping("counters")},
        )
        for c in body.items("consumesCounters")
    )
    return Device(
        name=name,
        attributes=attributes,
        capacity=capacity,
        consumes_counters=consumes,
        taints=_taints(body, "taints"),
        span=cursor.document.span(cursor.path),
    )


def _slice(cursor: Cursor, version: str) -> ResourceSlice:
    cursor = _named(cursor, "ResourceSlice")
    spec = cursor.at("spec")
    cursor.mapping("spec", required=True)
    driver = spec.text("driver") or ""
    pool = spec.at("pool")
    spec.mapping("pool", required=True)
    return ResourceSlice(
        name=cursor.at("metadata").text("name") or "",
        api_version=f"{RESOURCE_GROUP}/{version}",
        driver=driver,
        pool=pool.text("name") or "",
        pool_generation=pool.whole("generation", required=False),
        pool_slice_count=pool.whole("resourceSliceCount", required=False, default=1),
        node_name=spec.text("nodeName", required=False),
        devices=tuple(_device(d, driver, version) for d in spec.items("devices")),
        shared_counters=tuple(
            CounterSet(
                c.text("name") or "",
                {k: _capacity(c.at("counters", k)) for k in c.mapping("counters")},
            )
            for c in spec.items("sharedCounters")
        ),
        span=cursor.document.span(cursor.path),
    )


def _taint_rule(cursor: Cursor, version: str) -> DeviceTaintRule:
    cursor = _named(cursor, "DeviceTaintRule")
    spec = cursor.at("spec")
    cursor.mapping("spec", required=True)
    selector = spec.at("deviceSelector")
    has_selector = _has(spec, "deviceSelector")
    spec.mapping("taint", required=True)
    taint = spec.at("taint")

    def field(key: str) -> str | None:
        return selector.text(key, required=False) if has_selector else None

    unevaluated = has_selector and any(
        selector.value().get(key) is not None for key in ("deviceClassName", "selectors")
    )
    return DeviceTaintRule(
        name=cursor.at("metadata").text("name") or "",
        api_version=f"{RESOURCE_GROUP}/{version}",
        driver=field("driver"),
        pool=field("pool"),
        device=field("device"),
        taint=Taint(
            taint.text("key") or "",
            taint.text("value", required=False) or "",
            taint.text("effect") or "",
        ),
        unevaluated=unevaluated,
        span=cursor.document.span(cursor.path),
    )


def _duplicates(
    nodes: list[Node], slices: list[ResourceSlice], rules: list[DeviceTaintRule]
) -> Iterator[Diagnostic]:
    """GF802 for an object the dump holds twice (two dumps concatenated, say)."""
    objects: list[tuple[str, str, Span]] = [
        *(("Node", n.name, n.span) for n in nodes),
        *(("ResourceSlice", s.name, s.span) for s in slices),
        *(("DeviceTaintRule", r.name, r.span) for r in rules),
    ]
    seen: dict[tuple[str, str], Span] = {}
    for kind, name, span in objects:
        first = seen.setdefault((kind, name), span)
        if first is not span:
            yield Diagnostic(
                "GF802",
                f"{kind} {name} is in the dump twice",
                span,
                ("dump the cluster once: one kubectl get",),
                related=(("first here", first),),
            )
