"""The CEL environment: Kubernetes quantity and semver semantics, type-checking, errors."""

from __future__ import annotations

import pytest

from compiler.cel import (
    CelCompileError,
    CelEvaluationError,
    compile_expression,
    quantity_value,
    semver_value,
)

H100 = {
    "driver": "gpu.nvidia.com",
    "attributes": {
        "gpu.nvidia.com": {
            "type": "gpu",
            "productName": "NVIDIA H100 80GB HBM3",
            "cudaComputeCapability": semver_value("9.0"),
        }
    },
    "capacity": {"gpu.nvidia.com": {"memory": quantity_value(str(81559 * 2**20))}},
}


def evaluate(expression: str) -> object:
    return compile_expression(expression, ("device",)).evaluate({"device": H100})


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("79Gi")) >= 0', True),
        ('device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("80Gi")) >= 0', False),
        ('device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("85G"))', True),
        ('quantity("1Gi").compareTo(quantity("1024Mi")) == 0', True),
        ('quantity("500m").isLessThan(quantity("1"))', True),
        ('quantity("1.5").add(quantity("500m")).compareTo(quantity("2")) == 0', True),
        ('quantity("2Gi").asInteger() == 2147483648', True),
        (
            'device.attributes["gpu.nvidia.com"].cudaComputeCapability.isGreaterThan(semver("8.9.0"))',
            True,
        ),
        ('device.attributes["gpu.nvidia.com"].cudaComputeCapability.major() == 9', True),
        ('device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA H1")', True),
        ('device.attributes["gpu.nvidia.com"].productName.lowerAscii().contains("hbm3")', True),
        ('has(device.attributes["gpu.nvidia.com"].profile)', False),
        ('isQuantity("12Gi") && !isQuantity("12 GB")', True),
    ],
)
def test_kubernetes_semantics(expression: str, expected: bool) -> None:
    assert evaluate(expression) is expected


@pytest.mark.parametrize(
    "expression",
    [
        "device.driver ==",  # syntax
        "nodes.size() > 0",  # undeclared variable
        '"80Gi".compareTo(quantity("1Gi")) > 0',  # a string is not a quantity
        'quantity("1Gi").isGreaterThan(semver("1.0.0"))',  # quantity vs semver
        'quantity("1Gi") + 1 == 2',  # no arithmetic on quantities
        "1 + 2",  # not a bool
    ],
)
def test_type_checker_rejects(expression: str) -> None:
    with pytest.raises(CelCompileError):
        compile_expression(expression, ("device",))


def test_compile_error_carries_the_column() -> None:
    with pytest.raises(CelCompileError) as caught:
        compile_expression('device.driver == "x" && foo', ("device",))
    assert (caught.value.line, caught.value.column) == (1, 25)


def test_missing_attribute_is_an_evaluation_error() -> None:
    with pytest.raises(CelEvaluationError):
        evaluate('device.attributes["gpu.nvidia.com"].profile == "3g.40gb"')


def test_malformed_quantity_literal_fails_at_evaluation() -> None:
    with pytest.raises(CelEvaluationError):
        evaluate('quantity("12 GB").isInteger()')


@pytest.mark.parametrize(
    "expression",
    [
        'semver("99999999999999999999.0.0").major() > 0',
        'quantity("16Ei").asInteger() > 0',
        'quantity("8Ei").asInteger() > 0',
        'quantity("-9223372036854775808").sub(1).asInteger() < 0',
    ],
)
def test_results_beyond_int64_are_evaluation_errors(expression: str) -> None:
    # They crashed the binding (an internal error) or came back as uint64.
    with pytest.raises(CelEvaluationError):
        compile_expression(expression, ("device",)).evaluate({"device": {}})
