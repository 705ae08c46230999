"""A sound static upper bound on the runtime cost the Kubernetes API server charges an expression.

cel-expr-python has no cost estimator, so this walks cel-cpp's checked syntax tree (macros
expanded) and charges every node at least what cel-go's runtime cost tracker
(interpreter/runtimecost.go, with Kubernetes' library/cost.go) charges for it:

- identifier or field selection 1, `has()` 1 (Kubernetes charges 0), constant 0;
- list literal 10, map literal 30, plus their elements (optimizing cel-go may fold constant
  ones to 0);
- a call 1 (`size`, `!`, index, `string()`, ...), except: `==`, `!=`, `<`...
  ceil(0.1 * shorter operand); `in` a list: its length;
  `+` on strings ceil(0.1 * (m + n)); `startsWith`/`endsWith`/`lowerAscii`/`upperAscii`/`trim`
  ceil(0.1 * length); `contains` ceil(0.1 * m) * ceil(0.1 * n); `join` ceil(0.2 * result length);
- `&&`, `||` and `?:` nothing of their own, but both branches are charged (cel-go runs one);
- a comprehension: its range, its init, and for every item of the range (the range's bound,
  never fewer: no short-circuit credit) the loop condition and the loop step, then the result.

Sizes come from Shapes (compiler.cel.value_bounds); a field, function or construct without a bound
raises CostModelError instead of guessing, which is what keeps the bound sound. A value that
cannot exist (an index into an empty literal, an item of an empty list) is NEVER and costs
nothing further: the API server never gets to evaluate past it. Not covered:
protobuf message literals, regular expressions, functions outside the table below, and
accumulators that grow faster than a constant number of items per iteration (all rejected).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import cast

from compiler.cel.ast import (
    Call,
    Comprehension,
    Const,
    Ident,
    ListLit,
    MapLit,
    Node,
    Select,
    children,
    parse_checked,
)
from compiler.cel.literal import CelLiteral, Literal, is_mapping
from compiler.cel.value_bounds import NEVER, SCALAR, Shape, ShapeError, list_of, merge, string

PER_CALL_LIMIT = 1_000_000
"""k8s.io/apiserver/pkg/apis/cel/config.go: the runtime cost limit of one expression."""
RUNTIME_BUDGET = 10_000_000
"""The runtime budget of one policy evaluation (per ValidatingAdmissionPolicyBinding)."""
MATCH_CONDITIONS_BUDGET = 2_500_000
"""The runtime budget of a policy's matchConditions, per object."""

LIST_CREATE, MAP_CREATE, TRAVERSAL = 10, 30, 0.1
_FREE = {"_&&_", "_||_", "_?_:_"}
_NOMINAL = {"!_", "-_", "@not_strictly_false", "size", "_-_", "_*_", "_/_", "_%_", "int"}
_COMPARISONS = {"_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_"}
_TRAVERSALS = {"startsWith", "endsWith", "lowerAscii", "upperAscii", "trim"}


class CostModelError(ValueError):
    """The expression uses something this bound has no sound model for."""


@dataclass(frozen=True)
class Bound:
    """An upper bound on an expression's runtime cost, and on the value it produces."""

    cost: int
    shape: Shape


def bound_expression(source: str, variables: Mapping[str, Shape]) -> Bound:
    """The worst-case cost of `source` when its variables are bounded by `variables`.

    Bounds are remembered per expression and variable shapes: the policies of many clusters
    share their expressions and, mostly, their shapes.
    """
    return _bound_source(source, tuple(sorted(variables.items())))


@lru_cache(maxsize=4096)
def _bound_source(source: str, variables: tuple[tuple[str, Shape], ...]) -> Bound:
    names = tuple(name for name, _ in variables)
    try:
        return _Walk(_free_variables(source, names)).bound(
            parse_checked(source, names), dict(variables)
        )
    except ShapeError as error:
        raise CostModelError(str(error)) from None


@lru_cache(maxsize=1024)
def bound_literal(literal: CelLiteral) -> Bound:
    """What `bound_expression` gives `literal`, sized from its data instead of parsed.

    Remembered per source text: a cluster's policies share literals (its teams, say).
    """
    try:
        return _literal(literal.value)
    except ShapeError as error:
        raise CostModelError(str(error)) from None


def _literal(value: Literal) -> Bound:
    cost, shape = _siblings([value])
    assert shape is not None  # one value: a shape
    return Bound(cost, shape)


def _siblings(values: Sequence[Literal]) -> tuple[int, Shape | None]:
    """The summed cost and the merged shape of values side by side in a literal (a list's
    items, a map's keys or its values), what _list_literal and _map_literal would make of
    their Bounds (strings are free constants), sized a level at a time: one Shape a level,
    not one an item merged with the next (literals hold hundreds of names). None: no value."""
    if not values:
        return 0, None
    kind = _kind(values[0])
    if any(_kind(value) != kind for value in values[1:]):  # one by one: merge refuses them
        each = [_siblings([value]) for value in values]
        merged: Shape | None = None
        for _, shape in each:
            merged = merge(merged, shape)
        return sum(cost for cost, _ in each), merged
    if kind == "string":
        return 0, string(max(len(cast(str, value)) for value in values))
    if kind == "map":
        maps = cast(Sequence[Mapping[str, Literal]], values)
        key_cost, key = _siblings([key for entries in maps for key in entries])
        item_cost, item = _siblings([item for entries in maps for item in entries.values()])
        size = max(len(entries) for entries in maps)
        return len(maps) * MAP_CREATE + key_cost + item_cost, Shape("map", size, item, key)
    lists = cast(Sequence[Sequence[Literal]], values)
    item_cost, item = _siblings([item for items in lists for item in items])
    size = max(len(items) for items in lists)
    return len(lists) * LIST_CREATE + item_cost, Shape("list", size, item)


def _kind(value: Literal) -> str:
    return "string" if isinstance(value, str) else "map" if is_mapping(value) else "list"


def _list_literal(items: list[Bound]) -> Bound:
    """Creating a list is charged, and its elements."""
    item: Shape | None = None
    for bound in items:
        item = merge(item, bound.shape)
    return Bound(LIST_CREATE + sum(b.cost for b in items), Shape("list", len(items), item))


def _map_literal(entries: list[tuple[Bound, Bound]]) -> Bound:
    """Creating a map is charged, and its keys and values."""
    key = value = None
    for k, v in entries:
        key, value = merge(key, k.shape), merge(value, v.shape)
    cost = MAP_CREATE + sum(k.cost + v.cost for k, v in entries)
    return Bound(cost, Shape("map", len(entries), value, key))


def _ceil(factor: float, size: int) -> int:
    return max(1, math.ceil(size * factor))


@cache
def _free_variables(source: str, names: tuple[str, ...]) -> dict[int, tuple[str, ...]]:
    """Where _Walk keeps the variables each node of `parse_checked(source, names)` reads, by
    the node's id: filled as nodes are met, and kept as long as the tree is (parse_checked
    keeps every tree it parsed), so an id never names another node."""
    return {}


class _Walk:
    """One expression's bound, node by node. A comprehension charges its loop step three
    times (twice to see how its accumulator grows, once more for the cost of an item), and
    with it every comprehension nested in the step: each subtree's bound is remembered for
    the shapes of the variables it reads, so a subtree whose variables did not change is
    charged once rather than three times a level of nesting."""

    def __init__(self, free: dict[int, tuple[str, ...]]) -> None:
        self.known: dict[tuple[int, tuple[Shape | None, ...]], Bound] = {}
        self.free = free
        """The variables each node of the tree reads, by the node's id (_free_variables)."""

    def bound(self, node: Node, env: dict[str, Shape]) -> Bound:
        """The bound of `node` with its variables bounded by `env`."""
        if isinstance(node, Const):
            value = node.value
            return Bound(0, string(len(value)) if isinstance(value, str | bytes) else SCALAR)
        if isinstance(node, Ident):
            if node.name not in env:
                raise CostModelError(f"no bound for variable {node.name!r}")
            return Bound(1, env[node.name])
        key = (id(node), tuple(env.get(name) for name in self._free(node)))
        if (known := self.known.get(key)) is None:
            known = self.known[key] = self._compound(node, env)
        return known

    def _free(self, node: Node) -> tuple[str, ...]:
        """The variables `node` reads: a comprehension's own two are not its but its body's."""
        if (found := self.free.get(id(node))) is None:
            if isinstance(node, Ident):
                names = {node.name}
            elif isinstance(node, Comprehension):
                body = {
                    name
                    for part in (node.loop_condition, node.loop_step, node.result)
                    for name in self._free(part)
                }
                own = {node.iter_var, node.accu_var}
                names = {*self._free(node.iter_range), *self._free(node.accu_init), *(body - own)}
            else:
                names = {name for child in children(node) for name in self._free(child)}
            found = self.free[id(node)] = tuple(sorted(names))
        return found

    def _compound(self, node: Node, env: dict[str, Shape]) -> Bound:
        if isinstance(node, Select):
            operand = self.bound(node.operand, env)
            shape = SCALAR if node.test_only else operand.shape.field(node.field)
            if node.test_only:
                operand.shape.field(node.field)  # an undeclared field is refused here too
            return Bound(operand.cost + 1, shape)
        if isinstance(node, ListLit):
            return _list_literal([self.bound(e, env) for e in node.elements])
        if isinstance(node, MapLit):
            return _map_literal([(self.bound(k, env), self.bound(v, env)) for k, v in node.entries])
        if isinstance(node, Comprehension):
            return self._comprehension(node, env)
        assert isinstance(node, Call)
        operands = ([node.target] if node.target is not None else []) + list(node.args)
        bounds = [self.bound(o, env) for o in operands]
        cost, shape = _call_cost(node.function, [b.shape for b in bounds])
        return Bound(cost + sum(b.cost for b in bounds), shape)

    def _comprehension(self, node: Comprehension, env: dict[str, Shape]) -> Bound:
        source = self.bound(node.iter_range, env)
        if source.shape.kind == "never":
            return Bound(source.cost, NEVER)
        if source.shape.kind == "list":
            element = source.shape.item or NEVER
        elif source.shape.kind == "map":
            element = source.shape.key or NEVER
        else:
            raise CostModelError(f"cannot iterate over a {source.shape.kind}")
        count = source.shape.length
        init = self.bound(node.accu_init, env)
        accu = self._accumulator(node, env, element, init.shape, count)
        inner = {**env, node.iter_var: element, node.accu_var: accu}
        per_item = (
            self.bound(node.loop_condition, inner).cost + self.bound(node.loop_step, inner).cost
        )
        result = self.bound(node.result, inner)
        return Bound(source.cost + init.cost + count * per_item + result.cost, result.shape)

    def _accumulator(
        self, node: Comprehension, env: dict[str, Shape], element: Shape, start: Shape, count: int
    ) -> Shape:
        """The accumulator's bound after `count` steps, for steps that grow it linearly."""
        if start.kind != "list":
            return start
        sizes = [start.length]
        accu = start
        for _ in range(2):
            step = self.bound(node.loop_step, {**env, node.iter_var: element, node.accu_var: accu})
            if step.shape.kind != "list":
                raise CostModelError("a list accumulator that stops being a list")
            accu = Shape("list", step.shape.length, merge(accu.item, step.shape.item))
            sizes.append(accu.length)
        growth = sizes[1] - sizes[0]
        if sizes[2] - sizes[1] != growth or growth < 0:
            raise CostModelError("an accumulator that does not grow linearly")
        return list_of(start.length + count * growth, accu.item or NEVER)


def _call_cost(function: str, shapes: list[Shape]) -> tuple[int, Shape]:
    if function in _FREE:
        return 0, (merge(shapes[1], shapes[2]) or SCALAR) if function == "_?_:_" else SCALAR
    if NEVER in shapes:  # an operand that cannot exist: the call never runs
        return 0, NEVER
    if function in _COMPARISONS:
        return _ceil(TRAVERSAL, min(s.length for s in shapes)), SCALAR
    if function == "@in":
        container = shapes[1]
        return (container.length if container.kind == "list" else 1), SCALAR
    if function == "_[_]":
        container = shapes[0]
        if container.kind in ("list", "map"):
            return 1, container.item or NEVER
        raise CostModelError(f"cannot bound an index into a {container.kind}")
    if function in _NOMINAL:
        return 1, SCALAR
    if function == "_+_":
        return _concatenation(shapes[0], shapes[1])
    if function in _TRAVERSALS:
        result = shapes[0] if shapes[0].kind == "string" else SCALAR
        return _ceil(TRAVERSAL, shapes[0].length), result
    if function == "contains":
        return _ceil(TRAVERSAL, shapes[0].length) * _ceil(TRAVERSAL, shapes[1].length), SCALAR
    if function == "string":
        return 1, string(20) if shapes[0].kind == "scalar" else shapes[0]
    if function == "join":
        items, element = shapes[0], shapes[0].item
        separator = shapes[1].length if len(shapes) > 1 else 0
        per_item = element.length if element is not None else 0
        size = items.length * per_item + max(0, items.length - 1) * separator
        return _ceil(2 * TRAVERSAL, size), string(size)
    raise CostModelError(f"no cost model for function {function!r}")


def _concatenation(a: Shape, b: Shape) -> tuple[int, Shape]:
    if a.kind == "string" and b.kind == "string":
        size = a.length + b.length
        return _ceil(TRAVERSAL, size), string(size)
    if a.kind == "list" and b.kind == "list":
        return 1, Shape("list", a.length + b.length, merge(a.item, b.item))
    if a.kind == b.kind == "scalar":
        return 1, SCALAR
    raise CostModelError(f"cannot bound {a.kind} + {b.kind}")
