"""The real-cluster suite runs only where Go can build kube-apiserver (`make e2e`)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.e2e.policies import EXAMPLE, compile_tree

GO_MISSING = "e2e: Go is not installed, so no kube-apiserver can be built here"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Skip every e2e test with one line of reason on a machine without Go."""
    if shutil.which("go") is None:
        for item in items:
            item.add_marker(pytest.mark.skip(reason=GO_MISSING))


@pytest.fixture(scope="session")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example fleet compiled as a user compiles it: the out/ tree."""
    out = tmp_path_factory.mktemp("example") / "out"
    compile_tree(EXAMPLE, out)
    return out
