"""Hypothesis strategies that turn a valid policy tree into a hostile one.

Two families: structural mutations parse a file, change one node (wrong type, huge or
negative number, hostile string, missing or extra field, deep nesting, colliding name) and
dump it back; textual mutations damage the bytes (truncation, non-UTF-8, YAML hazards, random
YAML, empty files, odd file names). A drawn tree gets one to three of them.
"""

from __future__ import annotations

import math
from typing import Any

import yaml
from hypothesis import strategies as st

from tests.fuzz.corpus import FIELD_NAMES, HOSTILE_STRINGS, KINDS, SPECIAL_INTS, YAML_SNIPPETS
from tests.fuzz.seeds import SMALL, PolicyTree, example_tree

Path = tuple[str | int, ...]


SCALARS = st.one_of(
    st.sampled_from(HOSTILE_STRINGS),
    st.text(max_size=40),
    st.sampled_from(SPECIAL_INTS),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
)

VALUES = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.text(max_size=10) | st.sampled_from(HOSTILE_STRINGS), children, max_size=4
        )
    ),
    max_leaves=10,
)


def _paths(node: Any, limit: int = 2000) -> list[Path]:
    """Paths of the nodes of a document, breadth first, at most `limit` of them (an alias
    bomb that PyYAML loaded as shared lists would have billions)."""
    found: list[Path] = []
    queue: list[tuple[Path, Any]] = [((), node)]
    while queue and len(found) < limit:
        path, current = queue.pop(0)
        found.append(path)
        if isinstance(current, dict):
            queue.extend(((*path, k), v) for k, v in current.items() if isinstance(k, str))
        elif isinstance(current, list):
            queue.extend(((*path, i), v) for i, v in enumerate(current))
    return found


def _get(node: Any, path: Path) -> Any:
    for step in path:
        node = node[step]
    return node


def _dump(documents: list[Any]) -> bytes:
    return yaml.safe_dump_all(
        documents, allow_unicode=True, sort_keys=False, width=math.inf
    ).encode("utf-8")


def _load(content: bytes) -> list[Any] | None:
    try:
        documents = list(yaml.safe_load_all(content.decode("utf-8")))
    except (UnicodeDecodeError, yaml.YAMLError, ValueError, RecursionError):
        return None
    return documents if documents and all(d is not None for d in documents) else None


@st.composite
def structural(draw: st.DrawFn, tree: PolicyTree) -> PolicyTree:
    """Change one node of one document of one file, then dump the file back."""
    file = draw(st.sampled_from(sorted(tree)))
    documents = _load(tree[file])
    if documents is None:
        return draw(textual(tree))
    index = draw(st.integers(0, len(documents) - 1))
    paths = _paths(documents[index])
    path = draw(st.sampled_from(paths))
    operation = draw(
        st.sampled_from(
            ["tweak", "tweak", "tweak", "set", "set", "delete", "extra", "nest", "list", "collide"]
        )
    )
    parent = _get(documents[index], path[:-1]) if path else None
    if operation == "tweak" and path:
        parent[path[-1]] = draw(_same_kind(_get(documents[index], path)))
    elif operation in ("set", "tweak") or not path:
        value = draw(VALUES)
        if path:
            parent[path[-1]] = value
        else:
            documents[index] = value
    elif operation == "delete":
        del parent[path[-1]]
    elif operation == "extra":
        target = _get(documents[index], path)
        if isinstance(target, dict):
            target[draw(st.sampled_from(FIELD_NAMES) | st.text(max_size=12))] = draw(VALUES)
        else:
            parent[path[-1]] = {draw(st.sampled_from(FIELD_NAMES)): target}
    elif operation == "nest":
        value = _get(documents[index], path)
        for _ in range(draw(st.integers(1, 80))):
            value = [value] if draw(st.booleans()) else {"x": value}
        parent[path[-1]] = value
    elif operation == "list":
        target = _get(documents[index], path)
        if isinstance(target, list) and target:
            choice = draw(st.sampled_from(["empty", "repeat", "drop"]))
            if choice == "empty":
                target.clear()
            elif choice == "repeat":
                target.extend(target * draw(st.integers(1, 3)))
            else:
                del target[draw(st.integers(0, len(target) - 1))]
        else:
            parent[path[-1]] = [target] * draw(st.integers(0, 3))
    else:
        parent[path[-1]] = _collision(draw, tree)
    return {**tree, file: _dump(documents)}


def _same_kind(value: Any) -> st.SearchStrategy[Any]:
    """A plausible replacement of the same type, so that later stages get to run."""
    if isinstance(value, bool):
        return st.booleans()
    if isinstance(value, int):
        return st.integers(-2, 2 * max(value, 4)) | st.sampled_from(SPECIAL_INTS)
    if isinstance(value, str):
        variants = [value.upper(), value.replace("-", "_"), value + "x", value[:-1]]
        return (
            st.sampled_from(variants)
            | st.sampled_from(HOSTILE_STRINGS)
            | st.from_regex(r"[a-z][a-z0-9-]{0,20}[a-z0-9]", fullmatch=True)
        )
    if isinstance(value, list):
        return st.lists(st.sampled_from(value), max_size=len(value) + 2) if value else VALUES
    return VALUES


def _collision(draw: st.DrawFn, tree: PolicyTree) -> str:
    """A name of another object (or namespace), spelled so that it normalises to the same."""
    names: list[str] = []
    for content in tree.values():
        for document in _load(content) or []:
            if isinstance(document, dict):
                meta = document.get("metadata")
                if isinstance(meta, dict) and isinstance(meta.get("name"), str):
                    names.append(meta["name"])
                spec = document.get("spec")
                if isinstance(spec, dict) and isinstance(spec.get("namespaces"), list):
                    names.extend(n for n in spec["namespaces"] if isinstance(n, str))
    name = draw(st.sampled_from(names or ["team-a"]))
    spelling = draw(st.sampled_from(["same", "upper", "underscore", "both", "spaced"]))
    if spelling == "upper":
        return name.upper()
    if spelling == "underscore":
        return name.replace("-", "_")
    if spelling == "both":
        return name.upper().replace("-", "_")
    if spelling == "spaced":
        return f" {name} "
    return name


@st.composite
def textual(draw: st.DrawFn, tree: PolicyTree) -> PolicyTree:
    """Damage the bytes of one file, or add a file."""
    file = draw(st.sampled_from(sorted(tree)))
    content = tree[file]
    operation = draw(
        st.sampled_from(
            [
                "empty",
                "truncate",
                "bytes",
                "snippet",
                "snippet",
                "lines",
                "random-yaml",
                "deep",
                "bomb",
                "new-file",
                "merge",
                "kind",
            ]
        )
    )
    position = draw(st.sampled_from([0, len(content)]) | st.integers(0, len(content)))
    if operation == "empty":
        content = draw(st.sampled_from([b"", b"   \n\t \n", b"---\n", b"# only a comment\n"]))
    elif operation == "truncate":
        content = content[:position]
    elif operation == "bytes":
        content = content[:position] + draw(st.binary(min_size=1, max_size=6)) + content[position:]
    elif operation == "snippet":
        snippet = draw(st.sampled_from(YAML_SNIPPETS)).encode("utf-8", "surrogatepass")
        content = content[:position] + snippet + content[position:]
    elif operation == "lines":
        lines = content.split(b"\n")
        line = draw(st.integers(0, len(lines) - 1))
        choice = draw(st.sampled_from(["drop", "repeat", "indent", "dedent", "swap"]))
        if choice == "drop":
            del lines[line]
        elif choice == "repeat":
            lines.insert(line, lines[line])
        elif choice == "indent":
            lines[line] = b" " * draw(st.integers(1, 5)) + lines[line]
        elif choice == "dedent":
            lines[line] = lines[line].lstrip()
        else:
            other = draw(st.integers(0, len(lines) - 1))
            lines[line], lines[other] = lines[other], lines[line]
        content = b"\n".join(lines)
    elif operation == "random-yaml":
        content = _dump([draw(VALUES) for _ in range(draw(st.integers(1, 3)))])
    elif operation == "deep":
        depth = draw(st.sampled_from([63, 64, 65, 200, 1000, 10_000]))
        opener = draw(st.sampled_from(["[", "{a: ", "- "]))
        content = b"a: " + (opener * depth).encode()
    elif operation == "bomb":
        width, levels = draw(st.integers(2, 10)), draw(st.integers(2, 12))
        lines_ = ["a0: &a0 [x]"] + [
            f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels)
        ]
        content = ("\n".join(lines_) + "\n").encode()
    elif operation == "new-file":
        name = draw(
            st.sampled_from(
                [
                    "x.yaml",
                    "teams/new.yml",
                    "a b.yaml",
                    "ünï.yaml",
                    "q'\"\n{{x}}.yaml",
                    "\udcff.yaml",
                ]
            )
            | st.text(
                st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00"),
                min_size=1,
                max_size=12,
            ).map(lambda s: s + ".yaml")
        )
        source = draw(st.sampled_from(sorted(tree)))
        return {**tree, name: tree[source] if draw(st.booleans()) else content}
    elif operation == "merge":
        content = (
            b"base: &base {nodes: 1, gpu: L40S, gpusPerNode: 4, hostMemory: 1Ti, cpu: 64}\n"
            + content
        ).replace(b"    - {name: l40s,", b"    - {<<: *base, name: l40s,")
    else:
        kind = draw(st.sampled_from(KINDS)).encode()
        for known in KINDS:
            content = content.replace(b"kind: " + known.encode(), b"kind: " + kind, 1)
    return {**tree, file: content}


@st.composite
def hostile_trees(draw: st.DrawFn) -> PolicyTree:
    """A valid policy tree (mostly the small one, which solves fast) with 1-3 mutations,
    structural ones twice as often as textual ones (which rarely leave a file loadable)."""
    tree = dict(SMALL) if draw(st.integers(0, 3)) else example_tree()
    for _ in range(draw(st.sampled_from([1, 1, 1, 2, 2, 3]))):
        mutation = structural(tree) if draw(st.integers(0, 2)) else textual(tree)
        tree = draw(mutation)
    return tree
