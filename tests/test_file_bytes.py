"""Small files read and written with plain system calls (compiler/file_bytes.py)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from compiler.file_bytes import read_at_most, read_regular, read_whole, write_new


@pytest.mark.parametrize("size", [0, 1, 65_535, 65_536, 65_537, 300_000])
def test_reads_are_what_the_file_holds_up_to_the_limit(tmp_path: Path, size: int) -> None:
    path = tmp_path / "file"
    path.write_bytes(bytes(range(256)) * (size // 256) + b"x" * (size % 256))
    data = path.read_bytes()
    assert read_whole(path) == data
    status, whole = read_regular(path)
    assert whole == data and status.st_size == size and status.st_ino == path.stat().st_ino
    for limit in (0, 1, 10, size, size + 1, 70_000):
        assert read_at_most(path, limit) == data[:limit]


def test_a_short_read_is_not_the_end_of_the_file(tmp_path: Path) -> None:
    """A read may return less than asked without the file ending (a pipe here; some network
    file systems do it on regular files): reading goes on until the end."""
    reader, writer = os.pipe()

    def write_slowly() -> None:
        for _ in range(3):
            os.write(writer, b"y" * 1000)
            time.sleep(0.05)
        os.close(writer)

    thread = threading.Thread(target=write_slowly)
    thread.start()
    try:
        assert read_whole(f"/dev/fd/{reader}") == b"y" * 3000
    finally:
        thread.join()
        os.close(reader)


def test_a_new_file_is_never_one_found_there(tmp_path: Path) -> None:
    """write_new refuses a path that exists, a link included, and leaves it as it was."""
    planted = tmp_path / "planted"
    planted.write_bytes(b"someone else's")
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "elsewhere")
    for path in (planted, link):
        with pytest.raises(FileExistsError):
            write_new(str(path), b"mine")
    assert planted.read_bytes() == b"someone else's"
    assert not (tmp_path / "elsewhere").exists()
    write_new(str(tmp_path / "new"), b"mine", 0o600)
    assert (tmp_path / "new").read_bytes() == b"mine"
    assert (tmp_path / "new").stat().st_mode & 0o777 == 0o600


def test_read_regular_refuses_a_link_and_a_fifo_at_once(tmp_path: Path) -> None:
    """What out/'s index reads: a regular file, never through a link, and a FIFO is refused
    without waiting for a writer (opening one to read would block)."""
    (tmp_path / "file").write_bytes(b"x")
    (tmp_path / "link").symlink_to(tmp_path / "file")
    os.mkfifo(tmp_path / "fifo")
    for name in ("link", "fifo"):
        outcome: list[BaseException | bytes] = []
        thread = threading.Thread(target=_read_into, args=(tmp_path / name, outcome), daemon=True)
        thread.start()
        thread.join(5)
        assert outcome and isinstance(outcome[0], OSError), f"{name}: {outcome or 'still waiting'}"


def _read_into(path: Path, outcome: list[BaseException | bytes]) -> None:
    try:
        outcome.append(read_regular(path)[1])
    except OSError as error:
        outcome.append(error)
