"""Compile, type-check and evaluate CEL expressions in a declared Kubernetes environment.

Why cel-expr-python: it binds cel-cpp, Google's reference implementation, so parsing,
macros, the standard library, error-as-value semantics and the type checker are those of
the CEL spec that Kubernetes' cel-go follows; the pure-Python engines re-implement the
language and do not type-check. The Kubernetes-specific libraries DRA selectors use
(quantity, semver) are declared in k8s_library.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_math, ext_optional, ext_strings

from compiler.cel.k8s_library import QUANTITY, SEMVER, check_declarations, runtime_declarations

T = cel.Type
_POSITION = re.compile(r"<input>:(\d+):(\d+): (.*)")


class CelCompileError(ValueError):
    """An expression that does not parse or type-check; line/column are 1-based in it, and
    `hint` says how to write it right where the checker knows (e.g. a quantity's compareTo)."""

    def __init__(
        self, message: str, line: int = 1, column: int = 1, hint: str | None = None
    ) -> None:
        super().__init__(message)
        self.message, self.line, self.column, self.hint = message, line, column, hint


class CelEvaluationError(ValueError):
    """An expression that failed while being evaluated (e.g. a missing attribute)."""


def _extensions() -> list[Any]:
    return [
        ext_strings.ExtStrings(),
        ext_bindings.ExtBindings(),
        ext_math.ExtMath(),
        ext_optional.ExtOptional(),
    ]


@cache
def _check_env(variables: tuple[str, ...]) -> Any:
    return cel.NewEnv(
        variables={name: T.DYN for name in variables},
        extensions=_extensions(),
        functions=check_declarations(),
    )


DECLARED_TYPES = {
    "dyn": T.DYN,
    "string": T.STRING,
    "int": T.INT,
    "bool": T.BOOL,
    "quantity": QUANTITY,
    "version": SEMVER,
}
"""The types a variable may be declared with in `check_typed`, by name."""


@cache
def _typed_check_env(variables: tuple[tuple[str, str], ...]) -> Any:
    return cel.NewEnv(
        variables={name: DECLARED_TYPES[type_name] for name, type_name in variables},
        extensions=_extensions(),
        functions=check_declarations(),
    )


def check_typed(source: str, variables: tuple[tuple[str, str], ...]) -> None:
    """Type-check `source` with variables of declared types ((name, type name) pairs, the
    names of DECLARED_TYPES), so that a value of a known type is checked as that type.

    Raises CelCompileError like `compile_expression`; evaluation is not affected.
    """
    try:
        _typed_check_env(variables).compile(source)
    except RuntimeError as error:
        raise _compile_error(str(error)) from None


@cache
def _runtime_env(variables: tuple[str, ...]) -> Any:
    return cel.NewEnv(
        variables={name: T.DYN for name in variables},
        extensions=_extensions(),
        functions=runtime_declarations(),
    )


@dataclass(frozen=True)
class CompiledExpression:
    """A checked expression, ready to evaluate against values of its variables."""

    source: str
    variables: tuple[str, ...]
    result_type: str
    _program: Any

    def evaluate(self, values: Mapping[str, Any]) -> Any:
        """The expression's value; CelEvaluationError when CEL yields an error value."""
        result = self._program.eval(data=dict(values))
        if result.type() == T.ERROR:
            raise CelEvaluationError(str(result.value()))
        return result.plain_value()


@cache
def compile_expression(
    source: str, variables: tuple[str, ...], result: str = "bool"
) -> CompiledExpression:
    """Parse and type-check `source` with the given (dynamically typed) variables.

    `result` is the type the expression must have ("bool" for selectors and validations,
    "any" to accept whatever it yields); a dyn-typed result is accepted for "bool" too.
    """
    try:
        checked = _check_env(variables).compile(source)
    except RuntimeError as error:
        raise _compile_error(str(error)) from None
    type_name = checked.return_type().name().lower()
    if result == "bool" and type_name not in ("bool", "dyn"):
        raise CelCompileError(f"expression must be a bool, but it is {type_name}")
    program = _runtime_env(variables).compile(source, disable_check=True)
    return CompiledExpression(source, variables, type_name, program)


def checked_syntax(source: str, variables: tuple[str, ...]) -> bytes:
    """The checked expression as cel-cpp serializes it (a `cel.expr.CheckedExpr` in an Any).

    Raises CelCompileError like `compile_expression`; `compiler.cel.ast` decodes the bytes.
    """
    try:
        return bytes(_check_env(variables).compile(source).serialize())
    except RuntimeError as error:
        raise _compile_error(str(error)) from None


def _compile_error(text: str) -> CelCompileError:
    text = text.removeprefix("INVALID_ARGUMENT: ").strip()
    match = _POSITION.search(text)
    if match is None:
        return CelCompileError(text.split("\n")[0])
    message = match[3].split(" [INVALID_ARGUMENT]")[0].split("\n")[0].strip()
    return CelCompileError(message, int(match[1]), int(match[2]))
