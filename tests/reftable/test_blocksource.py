"""blocksource: bytes, pread and mmap sources read the same bytes."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from reftable_core.reftable.blocksource import (
    BlockSource,
    BytesSource,
    MmapSource,
    PreadSource,
    open_file_source,
)
from reftable_core.errors import NotExistError, ReftableError
from reftable_core.flags import Flags


@pytest.fixture()
def blob(tmp_path: Path) -> tuple[Path, bytes]:
    data = os.urandom(10000)
    p = tmp_path / "t.ref"
    p.write_bytes(data)
    return p, data


def test_sources_agree(blob) -> None:
    path, data = blob
    for src in (BytesSource(data, "b"), PreadSource(path), MmapSource(path)):
        assert isinstance(src, BlockSource)
        assert src.size() == len(data)
        for off, n in ((0, 10), (9990, 10), (9995, 100), (10000, 5), (123, 4096)):
            assert bytes(src.read(off, n)) == data[off:off + n]
        src.close()
        src.close()            # idempotent


def test_open_file_source_picks_by_flag(blob) -> None:
    path, _ = blob
    s = open_file_source(path, Flags(mmap=True))
    assert isinstance(s, MmapSource) and isinstance(s.read(0, 4), memoryview)
    s.close()
    s = open_file_source(path, Flags(mmap=False))
    assert isinstance(s, PreadSource) and isinstance(s.read(0, 4), bytes)
    assert s.name == str(path)
    s.close()


def test_missing_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(NotExistError):
        PreadSource(tmp_path / "nope")
    with pytest.raises(NotExistError):
        MmapSource(tmp_path / "nope")
    (tmp_path / "empty").write_bytes(b"")
    m = MmapSource(tmp_path / "empty")
    assert m.size() == 0 and bytes(m.read(0, 10)) == b""
    m.close()


def test_bad_range(blob) -> None:
    path, data = blob
    for src in (BytesSource(data), PreadSource(path), MmapSource(path)):
        with pytest.raises(ReftableError):
            src.read(-1, 5)
        src.close()


def test_mmap_close_with_live_slice(blob) -> None:
    path, data = blob
    m = MmapSource(path)
    view = m.read(0, 16)
    m.close()                  # must not raise although a slice is alive
    assert bytes(view) == data[:16]
