"""blocksource: bytes, pread and mmap sources read the same bytes."""
from __future__ import annotations

import mmap
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
    assert isinstance(s, MmapSource) and type(s.read(0, 4)) is bytes
    where = s.in_place(7)
    assert where is not None and type(where[0]) is mmap.mmap and where[1] == 7
    assert where[0] is s.in_place(9000)[0]       # one map, handed out in place
    s.close()
    s = open_file_source(path, Flags(mmap=False))
    assert isinstance(s, PreadSource) and type(s.read(0, 4)) is bytes
    assert s.in_place(0) is None                 # pread: no bytes until read
    assert s.name == str(path)
    s.close()


def test_mmap_holds_no_descriptor_and_reads_the_file(blob) -> None:
    path, data = blob
    before = len(os.listdir("/proc/self/fd"))
    m = MmapSource(path)
    assert len(os.listdir("/proc/self/fd")) == before       # closed right after mapping
    buf, at = m.in_place(0)
    assert buf[at:at + len(data)] == data and buf[123] == data[123]
    m.close()
    with pytest.raises(ValueError):                          # unmapped: an error, no crash
        buf[0]


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
    piece = m.read(0, 16)
    m.close()                  # a read is a copy: it outlives the map
    assert piece == data[:16]
