"""Diagnostics: the one type every stage reports problems with, its codes and its formats."""

from compiler.diagnostics.codes import CODES, Code, Severity
from compiler.diagnostics.diagnostic import (
    CompileError,
    Diagnostic,
    Span,
    Suppressed,
    exit_code_for,
)
from compiler.diagnostics.problems import Problems, fail
from compiler.diagnostics.source import SpanSource

__all__ = [
    "CODES",
    "Code",
    "CompileError",
    "Diagnostic",
    "Problems",
    "Severity",
    "Span",
    "SpanSource",
    "Suppressed",
    "exit_code_for",
    "fail",
]
