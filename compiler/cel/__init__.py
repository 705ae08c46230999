"""CEL: the Kubernetes DRA selector environment on Google's cel-cpp (cel-expr-python)."""

from compiler.cel.environment import (
    CelCompileError,
    CelEvaluationError,
    CompiledExpression,
    compile_expression,
)
from compiler.cel.k8s_library import quantity_value, semver_value

__all__ = [
    "CelCompileError",
    "CelEvaluationError",
    "CompiledExpression",
    "compile_expression",
    "quantity_value",
    "semver_value",
]
