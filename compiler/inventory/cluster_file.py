"""Write imported pools into `policies/clusters/<cluster>.yaml`: a new file, or the existing
one updated in place with ruamel.yaml's round trip.

The import owns only what describes the hardware of each pool: its nodes (`nodes` or
`nodeNames`), `gpu`, `gpusPerNode`, `hostMemory`, `cpu`, and where the dump shows them, `mig`
and the `topology` fields the catalog's board does not already say.
Everything else (the pool's name, nodeTaint, topology, the cluster's kubelet, kueue, apiServer,
description, other documents, comments) stays as written. A value is rewritten only when it
means something else than what is written (`2Ti` stays `2Ti` for 2048Gi of memory), so an
import of an unchanged cluster leaves the file byte for byte as it was.

Pools are matched to the file's by their nodes (the existing pool that shares the most node
names with an imported one keeps its name and position), then by shape (model and GPUs per
node) for pools none of whose nodes the file names; imported pools left over are appended,
and pools of the file the dump has no node of are kept, with a warning (GF816): the dump may
be partial, and a pool is deleted by hand.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from compiler.catalog import Catalog
from compiler.diagnostics import Diagnostic, Span, fail
from compiler.inventory.pools import ImportedPool, MigMode, natural_key
from compiler.model.base import API_VERSION
from compiler.model.cluster import NodePool
from compiler.quantity import QuantityError, format_bytes, format_decimal, parse_quantity
from compiler.write.policy_yaml import policy_yaml

SCHEMA_COMMENT = "# yaml-language-server: $schema="
DEFAULT_SCHEMA_LINE = f"{SCHEMA_COMMENT}../../docs/policy.schema.json"
"""The modeline of a new cluster file when no other file of policies/clusters/ has one."""
DEFAULT_PATTERN = "{cluster}-{pool}-{index}"
_ANCHORED = re.compile(r"(^|[\s\[{,:-])[&*][A-Za-z0-9_][^\s,\]}]*|<<\s*:", re.MULTILINE)
"""A YAML anchor (`&name`), alias (`*name`) or merge key (`<<:`)."""
_MIG_RANK = {"disabled": 0, "allowed": 1, "mixed": 2}


@dataclass(frozen=True)
class NewCluster:
    """What a new cluster file says besides its pools."""

    kubernetes_version: str | None
    driver_version: str | None
    """None: the default release."""


@dataclass
class Update:
    """The text to write and what changed, pool by pool (for the command's summary)."""

    text: str
    changed: bool
    created: bool
    notes: list[str] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)


def update_cluster_file(
    path: Path,
    shown: str,
    cluster: str,
    pools: list[ImportedPool],
    catalog: Catalog,
    new: NewCluster,
) -> Update:
    """The cluster file with `pools` imported (see the module docstring); raises GF815 when
    the existing file cannot be updated safely."""
    if not path.exists():
        text = _new_file(path, cluster, pools, new, catalog)
        return Update(text, True, True, [f"new pool {p}" for p in _names(pools, [], cluster)])
    try:
        old = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise fail("GF815", f"cannot read {shown}: {error}", Span(shown)) from None
    if _ANCHORED.search(old):
        raise fail(
            "GF815",
            f"{shown} uses YAML anchors or merge keys: an import cannot update it without "
            "changing what the aliases repeat",
            Span(shown, 1, 1),
            "expand the anchors by hand (write each value out), then import again",
        )
    try:
        documents = list(policy_yaml().load_all(old))
    except YAMLError as error:
        raise fail("GF815", f"{shown} is not valid YAML: {error}", Span(shown, 1, 1)) from None
    document = next(
        (
            d
            for d in documents
            if isinstance(d, dict)
            and d.get("kind") == "Cluster"
            and isinstance(d.get("metadata"), dict)
            and d["metadata"].get("name") == cluster
        ),
        None,
    )
    if document is None or not isinstance(document.get("spec"), dict):
        raise fail(
            "GF815",
            f"{shown} holds no Cluster {cluster!r} with a spec",
            Span(shown, 1, 1),
            "import into the file that declares the cluster, or move that file aside",
        )
    update = Update(old, False, False)
    _update_pools(document["spec"], shown, cluster, pools, catalog, update)
    if update.notes:  # else the file stays as written, byte for byte, however ruamel lays it out
        stream = io.StringIO()
        policy_yaml().dump_all(documents, stream)
        update.text, update.changed = stream.getvalue(), True
    return update


def schema_line(directory: Path) -> str:
    """The modeline the other cluster files have (the first found), or the default."""
    for other in sorted(directory.glob("*.yaml")) if directory.is_dir() else ():
        try:
            first = other.read_text(encoding="utf-8").split("\n", 1)[0]
        except (OSError, UnicodeDecodeError):
            continue
        if first.startswith(SCHEMA_COMMENT):
            return first
    return DEFAULT_SCHEMA_LINE


def _new_file(
    path: Path, cluster: str, pools: list[ImportedPool], new: NewCluster, catalog: Catalog
) -> str:
    spec = CommentedMap()
    if new.kubernetes_version is not None:
        spec["kubernetesVersion"] = DoubleQuotedScalarString(new.kubernetes_version)
    if new.driver_version is not None:
        spec["driverVersion"] = DoubleQuotedScalarString(new.driver_version)
    names = _names(pools, [], cluster)
    spec["nodePools"] = CommentedSeq(
        _new_pool(name, pool, cluster, catalog) for name, pool in zip(names, pools, strict=True)
    )
    document = CommentedMap(
        [
            ("apiVersion", API_VERSION),
            ("kind", "Cluster"),
            ("metadata", CommentedMap([("name", cluster)])),
            ("spec", spec),
        ]
    )
    stream = io.StringIO()
    policy_yaml().dump(document, stream)
    return f"{schema_line(path.parent)}\n{stream.getvalue()}"


def _default_names(pool: ImportedPool, cluster: str) -> str | None:
    """The pool name X when the nodes are exactly `{cluster}-X-0` ... `{cluster}-X-(n-1)`
    (the default nodeNames pattern), else None."""
    prefix = f"{cluster}-"
    first = pool.nodes[0]
    if not first.startswith(prefix) or not first.endswith("-0"):
        return None
    name = first[len(prefix) : -2]
    expected = {f"{prefix}{name}-{i}" for i in range(len(pool.nodes))}
    fits = re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", name) is not None
    return name if fits and expected == set(pool.nodes) else None


def _names(pools: list[ImportedPool], taken: list[str], cluster: str) -> list[str]:
    """Names for new pools: X of `{cluster}-X-<i>` node names, else the model's id in lower
    case; `-2`, `-3`... where a name is taken."""
    used = set(taken)
    names = []
    for pool in pools:
        base = _default_names(pool, cluster) or pool.shape.model.lower()
        name, suffix = base, 2
        while name in used:
            name, suffix = f"{base}-{suffix}", suffix + 1
        used.add(name)
        names.append(name)
    return names


def _new_pool(name: str, pool: ImportedPool, cluster: str, catalog: Catalog) -> CommentedMap:
    entry = CommentedMap([("name", name)])
    if _default_names(pool, cluster) == name:
        entry["nodes"] = len(pool.nodes)
    else:
        entry["nodeNames"] = CommentedSeq(pool.nodes)
    entry["gpu"] = pool.shape.model
    entry["gpusPerNode"] = pool.shape.gpus_per_node
    entry["hostMemory"] = format_bytes(pool.shape.host_memory)
    entry["cpu"] = _cpu(pool.shape.cpu)
    if pool.mig != "disabled":
        entry["mig"] = pool.mig
    topology = _topology_changes(pool, catalog, {})
    if topology:
        entry["topology"] = _flow(CommentedMap(topology))
    return entry


def _flow(mapping: CommentedMap) -> CommentedMap:
    mapping.fa.set_flow_style()
    return mapping


_TOPOLOGY_FIELDS = (("numaNode", "numa_node"), ("pcieRoot", "pcie_root"))


def _topology_changes(
    pool: ImportedPool, catalog: Catalog, written: dict[str, Any]
) -> dict[str, int]:
    """The topology fields to write: each the dump shows that neither the pool's written
    `topology` nor the catalog's board for the model and GPU count already says."""
    model = catalog.lookup(pool.shape.model)
    board = model.board(pool.shape.gpus_per_node) if model is not None else None
    changes = {}
    for key, attribute in _TOPOLOGY_FIELDS:
        seen = getattr(pool, attribute)
        current = written.get(key, getattr(board, attribute, None))
        if seen is not None and seen != current:
            changes[key] = seen
    return changes


def _cpu(value: Fraction) -> int | str:
    return value.numerator if value.denominator == 1 else format_decimal(value)


@dataclass(frozen=True)
class _Existing:
    entry: CommentedMap
    pool: NodePool
    names: tuple[str, ...]


def _update_pools(
    spec: CommentedMap,
    shown: str,
    cluster: str,
    pools: list[ImportedPool],
    catalog: Catalog,
    update: Update,
) -> None:
    entries = spec.get("nodePools")
    if entries is None:
        entries = spec["nodePools"] = CommentedSeq()
    if not isinstance(entries, list):
        raise fail("GF815", f"{shown}: the cluster's nodePools is not a list", Span(shown, 1, 1))
    existing = [_existing(entry, index, shown, cluster) for index, entry in enumerate(entries)]
    matches = _match(existing, pools, catalog)
    for index, found in enumerate(existing):
        imported = matches.get(index)
        if imported is None:
            update.warnings.append(_not_in_dump(found, shown, cluster))
            continue
        if _apply(found, imported, catalog, cluster):
            update.notes.append(f"updated pool {found.pool.name}")
    taken_pools = {id(p) for p in matches.values()}
    left = [p for p in pools if id(p) not in taken_pools]
    names = _names(left, [f.pool.name for f in existing], cluster)
    for name, pool in zip(names, left, strict=True):
        entries.append(_new_pool(name, pool, cluster, catalog))
        update.notes.append(f"new pool {name}")


def _existing(entry: Any, index: int, shown: str, cluster: str) -> _Existing:
    try:
        pool = NodePool.model_validate(entry)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(step) for step in first["loc"])
        raise fail(
            "GF815",
            f"{shown}: node pool {index} is not valid ({where}: {first['msg']})",
            _span(shown, entry),
            "`gpufleet check` says what is wrong with it; fix it, then import again",
        ) from None
    names = tuple(pool.node_name(cluster, i) for i in range(pool.nodes))
    return _Existing(entry, pool, names)


def _match(
    existing: list[_Existing], pools: list[ImportedPool], catalog: Catalog
) -> dict[int, ImportedPool]:
    """Existing pool index -> the imported pool it becomes."""
    matches: dict[int, ImportedPool] = {}
    taken: set[int] = set()
    for index, found in enumerate(existing):
        overlaps = [(len(set(found.names) & set(p.nodes)), -i) for i, p in enumerate(pools)]
        best = max((o for o in overlaps if o[0] > 0 and -o[1] not in taken), default=None)
        if best is not None:
            matches[index] = pools[-best[1]]
            taken.add(-best[1])
    for index, found in enumerate(existing):
        if index in matches:
            continue
        model = catalog.lookup(found.pool.gpu)
        for i, pool in enumerate(pools):
            same = model is not None and model.id == pool.shape.model
            if i not in taken and same and pool.shape.gpus_per_node == found.pool.gpus_per_node:
                matches[index] = pool
                taken.add(i)
                break
    return matches


def _apply(found: _Existing, imported: ImportedPool, catalog: Catalog, cluster: str) -> bool:
    """Rewrite the pool's hardware fields that say something else than the dump; whether any
    did."""
    entry, pool, shape = found.entry, found.pool, imported.shape
    changed = False

    def put(key: str, value: Any, same: Callable[[], bool], after: str | None = None) -> None:
        nonlocal changed
        if key in entry and same():
            return
        if key in entry:
            entry[key] = value
        else:
            position = list(entry).index(after) + 1 if after in entry else len(entry)
            entry.insert(position, key, value)
        changed = True

    model = catalog.lookup(pool.gpu)
    put("gpu", shape.model, lambda: model is not None and model.id == shape.model, "name")
    put("gpusPerNode", shape.gpus_per_node, lambda: pool.gpus_per_node == shape.gpus_per_node)
    put(
        "hostMemory",
        format_bytes(shape.host_memory),
        lambda: _same_quantity(entry.get("hostMemory"), shape.host_memory),
    )
    put("cpu", _cpu(shape.cpu), lambda: _same_quantity(entry.get("cpu"), shape.cpu))
    mig = _mig(pool.mig, imported.mig)
    if mig != pool.mig:
        put("mig", mig, lambda: False)
    written = entry.get("topology")
    topology = _topology_changes(
        imported, catalog, dict(written) if isinstance(written, dict) else {}
    )
    if topology:
        if isinstance(written, dict):
            written.update(topology)
        else:
            entry["topology"] = _flow(CommentedMap(topology))
        changed = True
    changed |= _apply_nodes(found, imported, cluster)
    return changed


def _mig(written: MigMode, seen: MigMode) -> MigMode:
    """The dump raises a pool's MIG mode where it shows MIG, never lowers it: nodes that show
    no MIG may be nodes the plan left whole."""
    return seen if _MIG_RANK[seen] > _MIG_RANK[written] else written


def _same_quantity(written: Any, value: Fraction) -> bool:
    try:
        return parse_quantity(str(written)) == value
    except QuantityError:
        return False


def _apply_nodes(found: _Existing, imported: ImportedPool, cluster: str) -> bool:
    """`nodes` or `nodeNames`: the pattern stays while it names exactly the dump's nodes."""
    entry, pool = found.entry, found.pool
    count = len(imported.nodes)
    if pool.listed_names is None:
        pattern_names = {pool.node_name(cluster, i) for i in range(count)}
        if pattern_names == set(imported.nodes):
            if pool.nodes == count:
                return False
            entry["nodes"] = count
            return True
        kept: list[str] = []
    else:
        kept = [name for name in pool.listed_names if name in set(imported.nodes)]
    new = kept + sorted((n for n in imported.nodes if n not in set(kept)), key=natural_key)
    if pool.listed_names is not None and list(pool.listed_names) == new:
        if "nodes" in entry and pool.nodes != count:
            entry["nodes"] = count
            return True
        return False
    names = CommentedSeq(new)
    if "nodeNames" in entry:
        entry["nodeNames"] = names
    else:
        entry.insert(list(entry).index("name") + 1, "nodeNames", names)
    if "nodes" in entry:
        del entry["nodes"]
    return True


def _span(shown: str, entry: Any) -> Span:
    """Where a round-trip node starts in the file."""
    line_col = getattr(entry, "lc", None)
    if line_col is None or line_col.line is None:
        return Span(shown, 1, 1)
    return Span(shown, line_col.line + 1, line_col.col + 1)


def _not_in_dump(found: _Existing, shown: str, cluster: str) -> Diagnostic:
    return Diagnostic(
        "GF816",
        f"pool {found.pool.name} of cluster {cluster}: the dump has none of its "
        f"{found.pool.nodes} nodes: kept as written",
        _span(shown, found.entry),
        ("a partial dump leaves pools out; delete the pool by hand if its nodes are gone",),
        cluster=cluster,
    )
