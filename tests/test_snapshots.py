"""One snapshot per emitted file of the example fleet, so a PR shows a readable YAML diff.

Update after an intended change with `.venv/bin/pytest tests/test_snapshots.py --snapshot-update`.
"""

from __future__ import annotations

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from compiler.pipeline import Compiled, compile_policies
from compiler.report.previous import read_previous_plans
from tests.conftest import EXAMPLE, REPO


class TextFileSnapshot(SingleFileSnapshotExtension):
    """Each snapshot is a plain text file named after the emitted path."""

    _write_mode = WriteMode.TEXT
    file_extension = "txt"


EXAMPLE_PATHS = sorted(
    compile_policies(EXAMPLE, previous=read_previous_plans(REPO / "out")[0]).tree
)


@pytest.mark.parametrize("path", EXAMPLE_PATHS, ids=lambda p: p.replace("/", "__"))
def test_emitted_file(path: str, compiled_example: Compiled, snapshot: SnapshotAssertion) -> None:
    assert compiled_example.tree[path] == snapshot(extension_class=TextFileSnapshot)
