"""Fuzz: truncated, bit-flipped and random tables raise only ReftableError, never hang."""
from __future__ import annotations

import io
import random
import signal
import struct
import zlib

import pytest
from reftable_core.reftable.blocksource import BytesSource
from reftable_core.errors import ReftableError
from reftable_core.flags import Flags, baseline
from reftable_core.reftable.record import LogRecord, RefRecord
from reftable_core.reftable.table import TableReader
from reftable_core.reftable.writer import WriterOptions, write_table


def _table(hash_id: str = "sha1", block_size: int = 256) -> bytes:
    hs = 20 if hash_id == "sha1" else 32
    refs = [RefRecord(b"HEAD", 1, 3, target=b"refs/heads/b0003")]
    for i in range(60):
        oid = bytes([i % 7, i]) + bytes(hs - 2)
        if i % 5 == 0:
            refs.append(RefRecord(b"refs/tags/t%04d" % i, 2, 2, oid, oid[::-1]))
        else:
            refs.append(RefRecord(b"refs/heads/b%04d" % i, 2, 1, oid))
    refs.append(RefRecord(b"refs/heads/deleted", 2, 0))
    logs = [LogRecord(r.refname, ui, 1, bytes(hs), r.value or bytes(hs), b"N", b"e@x",
                      1700000000 + ui, 60, b"msg %d" % ui)
            for r in refs[:12] for ui in (1, 2)]
    logs.append(LogRecord(b"refs/stash", 2, 0))
    buf = io.BytesIO()
    write_table(buf, refs, logs, WriterOptions(block_size=block_size, restart_interval=3,
                                               hash_id=hash_id, min_update_index=1,
                                               max_update_index=2))
    return buf.getvalue()


TABLES = {"sha1": _table("sha1"), "sha256": _table("sha256", 512)}
PROBES = [b"HEAD", b"refs/heads/b0017", b"refs/heads/zzz", b"refs/tags/t0005", b"a"]


def _exercise(data: bytes, flags: Flags) -> None:
    try:
        r = TableReader(BytesSource(data, "fuzz.ref"), flags)
        list(r.refs())
        list(r.logs())
        list(r.objs())
        list(r.blocks())
        for p in PROBES:
            r.seek_ref(p)
            list(r.logs_for(p))
        list(r.refs_for(bytes([3, 3]) + bytes(r.hash_size - 2)))
    except ReftableError:
        pass


@pytest.fixture(autouse=True)
def _no_hang():
    def boom(*_):
        raise TimeoutError("table reader hangs on fuzzed input")
    old = signal.signal(signal.SIGALRM, boom)
    signal.alarm(120)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("hash_id", sorted(TABLES))
def test_valid_tables_read(hash_id: str) -> None:
    r = TableReader(BytesSource(TABLES[hash_id]))
    assert len(list(r.refs())) == 62 and r.ref_index_offset and r.obj_offset


@pytest.mark.parametrize("hash_id", sorted(TABLES))
def test_truncated(hash_id: str) -> None:
    data = TABLES[hash_id]
    for n in range(0, len(data), 3):
        _exercise(data[:n], Flags())
    # truncated body but a valid footer moved to the end: exercises block reads
    foot = 68 if hash_id == "sha1" else 72
    for n in range(0, len(data) - foot, 7):
        _exercise(data[:n] + data[-foot:], Flags())


@pytest.mark.parametrize("flags", [Flags(), baseline()], ids=["default", "baseline"])
@pytest.mark.parametrize("hash_id", sorted(TABLES))
def test_bit_flips(hash_id: str, flags: Flags) -> None:
    rnd = random.Random(hash_id)
    data = TABLES[hash_id]
    for _ in range(400):
        bad = bytearray(data)
        for _ in range(rnd.choice((1, 1, 2, 8))):
            bad[rnd.randrange(len(bad))] ^= 1 << rnd.randrange(8)
        _exercise(bytes(bad), flags)


def _footer(header: bytes, offsets: list[int]) -> bytes:
    body = header + b"".join(struct.pack(">Q", o) for o in offsets)
    return body + struct.pack(">I", zlib.crc32(body))


def test_random_garbage_with_valid_frame() -> None:
    """Random bodies between a valid header and a valid (CRC-correct) footer."""
    rnd = random.Random(7)
    for i in range(1500):
        bs = rnd.choice((0, 64, 256, 4096))
        header = b"REFT\x01" + bs.to_bytes(3, "big") + bytes(7) + b"\x01" + bytes(7) + b"\x09"
        size = rnd.randrange(0, 600)
        body = bytearray(rnd.randbytes(size))
        if body and rnd.random() < 0.7:
            body[0] = rnd.choice(b"rgoi")
        if len(body) > 4 and rnd.random() < 0.5:
            body[1:4] = rnd.randrange(0, size + 30).to_bytes(3, "big")
        total = 24 + size
        offs = [rnd.choice((0, rnd.randrange(0, total + 5))) for _ in range(5)]
        offs[1] = (offs[1] << 5) | rnd.randrange(0, 32)
        data = header + bytes(body) + _footer(header, offs)
        _exercise(data, Flags() if i % 2 else baseline())


def test_random_bytes() -> None:
    rnd = random.Random(11)
    for _ in range(500):
        _exercise(rnd.randbytes(rnd.randrange(0, 300)), Flags())
        _exercise(b"REFT" + rnd.randbytes(rnd.randrange(0, 300)), Flags())
