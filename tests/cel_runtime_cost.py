"""A reference evaluator that charges what cel-go's runtime cost tracker charges (for tests).

It runs cel-cpp's checked syntax tree (compiler.cel.ast) on plain data, with CEL's
short-circuit and error-absorbing `&&`/`||`, early exit of `all`/`exists`, and the costs of
interpreter/runtimecost.go plus Kubernetes' library/cost.go as the API server configures
them (`has()` free, `join` 0.2 per result character). Tests compare its values with
cel-cpp's (so the evaluator is right) and its costs with the static bound (so the bound
is an upper bound on real evaluations).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from compiler.cel.ast import Call, Comprehension, Const, Ident, ListLit, MapLit, Node, Select


@dataclass(frozen=True)
class Err:
    """A CEL error value."""

    reason: str


def _size(value: Any) -> int:
    return len(value) if isinstance(value, str | list | dict) else 1


def _traverse(size: float) -> int:
    return math.ceil(size * 0.1)


class Evaluator:
    """Evaluates one expression, accumulating `cost`."""

    def __init__(self) -> None:
        self.cost = 0

    def run(self, node: Node, env: dict[str, Any]) -> Any:
        """The value of `node` (an Err for a CEL error), charging its cost."""
        if isinstance(node, Const):
            return node.value
        if isinstance(node, Ident):
            self.cost += 1
            return env[node.name]
        if isinstance(node, Select):
            operand = self.run(node.operand, env)
            if isinstance(operand, Err):
                return operand
            if not isinstance(operand, dict):
                return Err(f"select {node.field} on {type(operand).__name__}")
            if node.test_only:
                return node.field in operand
            self.cost += 1
            return operand[node.field] if node.field in operand else Err(f"no {node.field}")
        if isinstance(node, ListLit):
            items = [self.run(e, env) for e in node.elements]
            self.cost += 10
            return next((i for i in items if isinstance(i, Err)), items)
        if isinstance(node, MapLit):
            entries = [(self.run(k, env), self.run(v, env)) for k, v in node.entries]
            self.cost += 30
            return dict(entries)
        if isinstance(node, Comprehension):
            return self._fold(node, env)
        return self._call(node, env)

    def _fold(self, node: Comprehension, env: dict[str, Any]) -> Any:
        source = self.run(node.iter_range, env)
        if isinstance(source, Err):
            return source
        accu = self.run(node.accu_init, env)
        for item in list(source):
            inner = {**env, node.iter_var: item, node.accu_var: accu}
            if self.run(node.loop_condition, inner) is False:
                break
            accu = self.run(node.loop_step, inner)
        return self.run(node.result, {**env, node.accu_var: accu})

    def _logic(self, node: Call, env: dict[str, Any], decisive: bool) -> Any:
        left = self.run(node.args[0], env)
        if left is decisive:
            return decisive
        right = self.run(node.args[1], env)
        if right is decisive:
            return decisive
        return next((v for v in (left, right) if isinstance(v, Err)), not decisive)

    def _call(self, node: Call, env: dict[str, Any]) -> Any:
        name = node.function
        if name == "_&&_":
            return self._logic(node, env, False)
        if name == "_||_":
            return self._logic(node, env, True)
        if name == "_?_:_":
            condition = self.run(node.args[0], env)
            if isinstance(condition, Err):
                return condition
            return self.run(node.args[1] if condition else node.args[2], env)
        operands = ([node.target] if node.target is not None else []) + list(node.args)
        values = [self.run(o, env) for o in operands]
        if name == "@not_strictly_false":
            self.cost += 1
            return values[0] is not False
        error = next((v for v in values if isinstance(v, Err)), None)
        if error is not None:
            return error
        self.cost += self._charge(name, values)
        return _apply(name, values)

    def _charge(self, name: str, values: list[Any]) -> int:
        if name in ("_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_"):
            return _traverse(min(_size(v) for v in values))
        if name == "@in":
            return len(values[1]) if isinstance(values[1], list) else 1
        if name == "_+_" and isinstance(values[0], str):
            return _traverse(len(values[0]) + len(values[1]))
        if name == "join":
            return math.ceil(len(_apply(name, values)) * 0.2)
        if name == "startsWith":  # cel-go: a tenth of the receiver (runtimecost.go)
            return math.ceil(len(values[0]) * 0.1)
        return 1


def _apply(name: str, values: list[Any]) -> Any:
    a = values[0]
    b: Any = values[1] if len(values) > 1 else None
    match name:
        case "_==_":
            return a == b
        case "_!=_":
            return a != b
        case "_<_":
            return a < b
        case "_>_":
            return a > b
        case "!_":
            return not a
        case "@in":
            return a in b
        case "_+_":
            return a + b
        case "startsWith":
            return a.startswith(b)
        case "_-_":
            return a - b
        case "_[_]":
            if isinstance(a, list) and not 0 <= b < len(a):
                return Err("index out of range")
            if isinstance(a, dict) and b not in a:
                return Err("no such key")
            return a[b]
        case "size":
            return len(a)
        case "string":
            return str(a)
        case "join":
            return (b if b is not None else "").join(a)
    raise NotImplementedError(name)


def evaluate(node: Node, env: dict[str, Any]) -> tuple[Any, int]:
    """The value and the runtime cost of one expression."""
    evaluator = Evaluator()
    value = evaluator.run(node, env)
    return value, evaluator.cost
