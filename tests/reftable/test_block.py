"""block: writer layout (restarts, padding, deflate), reader, seek, flag variants."""
from __future__ import annotations

import itertools
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st
from reftable_core.reftable.block import (
    block_loader,
    iter_block,
    load_block_early_exit,
    load_block_full_setup,
    seek_in_block,
)
from reftable_core.reftable.loops import RESTART_SCANS
from reftable_core.reftable.block_writer import MAX_RESTARTS, BlockWriter
from reftable_core.reftable.blocksource import BytesSource
from reftable_core.errors import FormatError
from reftable_core.flags import Flags
from reftable_core.reftable.record import (
    BLOCK_TYPE_INDEX,
    BLOCK_TYPE_LOG,
    BLOCK_TYPE_REF,
    IndexRecord,
    LogRecord,
    RefRecord,
    encode_log_value,
    encode_ref_value,
)
from tests.helpers.table_strategies import (
    log_records,
    ref_records,
    relaxed,
    unique_sorted_logs,
    unique_sorted_refs,
)

FLAG_VARIANTS = [Flags(block_key_swap=a, ref_name_alloc=b, block_type_early_exit=c)
                 for a, b, c in itertools.product([True, False], repeat=3)]


def _ref_block(recs, block_size=4096, interval=16, header_off=0):
    bw = BlockWriter(BLOCK_TYPE_REF, block_size, header_off, interval, 20)
    for r in recs:
        assert bw.add(r.refname, r.value_type, encode_ref_value(r, 20))
    return bw, bw.finish()


def _load(data: bytes, header_off=0, flags=Flags(), block_size=0):
    return block_loader(flags)(BytesSource(data, "t.ref"), 0, header_off, block_size,
                               len(data))


def _restart_offsets(block) -> list[int]:
    return [block.restart_offset(i) for i in range(block.restart_count)]


def _refs(n: int) -> list[RefRecord]:
    return [RefRecord(b"refs/heads/branch-%05d" % i, 0, 1, i.to_bytes(20, "big"))
            for i in range(n)]


def test_restart_points_every_interval() -> None:
    recs = _refs(50)
    bw, data = _ref_block(recs, interval=4)
    block = _load(data)
    assert block.restart_count == 13      # records 0, 4, ..., 48
    offs = _restart_offsets(block)
    assert offs == sorted(offs) and offs[0] == 4
    for o in offs:                         # restart records are not prefix-compressed
        assert data[o] == 0
    assert int.from_bytes(data[1:4], "big") == len(data)
    assert list(iter_block(block, 20)) == recs


def test_first_block_offsets_include_file_header() -> None:
    recs = _refs(3)
    bw, data = _ref_block(recs, header_off=24)
    block = _load(data, header_off=24)
    assert _restart_offsets(block) == [28]
    assert list(iter_block(block, 20)) == recs


def test_block_full_returns_false_and_entry_too_big() -> None:
    bw = BlockWriter(BLOCK_TYPE_REF, 100, 0, 16, 20)
    rec = RefRecord(b"refs/heads/" + b"x" * 40, 0, 1, bytes(20))
    assert bw.add(rec.refname, 1, encode_ref_value(rec, 20))
    assert not bw.add(rec.refname + b"y", 1, encode_ref_value(rec, 20))
    assert bw.entries == 1


def test_max_restarts() -> None:
    bw = BlockWriter(BLOCK_TYPE_INDEX, (1 << 24) - 1, 0, 1, 20)
    for i in range(MAX_RESTARTS + 10):
        assert bw.add(b"%07d" % i, 0, b"\x00")
    assert len(bw.restarts) == MAX_RESTARTS
    block = _load(bw.finish())
    assert block.restart_count == MAX_RESTARTS
    assert [r.last_key for r in iter_block(block, 20)][-1] == b"%07d" % (MAX_RESTARTS + 9)


def test_log_block_is_deflated() -> None:
    logs = [LogRecord(b"refs/heads/x%03d" % i, 7, 1, bytes(20), bytes([i]) * 20, b"N", b"e",
                      1700000000, 60, b"m\n") for i in range(40)]
    bw = BlockWriter(BLOCK_TYPE_LOG, 8192, 0, 16, 20)
    for lg in logs:
        assert bw.add(lg.key(), 1, encode_log_value(lg, 20))
    raw_len = len(bw.buf) + 3 * len(bw.restarts) + 2
    data = bw.finish()
    assert data[0] == BLOCK_TYPE_LOG and int.from_bytes(data[1:4], "big") == raw_len
    inflated = zlib.decompress(data[4:])
    assert len(inflated) + 4 == raw_len
    # a following block right after the compressed data: full_size is found by the inflater
    block = _load(data + b"r\x00\x00\x10garbage")
    assert block.full_size == len(data)
    assert list(iter_block(block, 20)) == logs


def test_seek_in_block() -> None:
    recs = _refs(100)
    for interval in (1, 3, 16, 200):
        _, data = _ref_block(recs, block_size=8192, interval=interval)
        block = _load(data)
        keys = [r.refname for r in recs]
        for i, k in enumerate(keys):
            off, last = seek_in_block(block, k, 20)
            assert next(iter_block(block, 20, off=off, last=last)) == recs[i]
            off, last = seek_in_block(block, k + b"!", 20)   # between keys
            got = list(iter_block(block, 20, off=off, last=last))
            assert got == recs[i + 1:]
        off, last = seek_in_block(block, b"", 20)
        assert list(iter_block(block, 20, off=off, last=last)) == recs
        off, _ = seek_in_block(block, b"zzz", 20)
        assert off == block.end


@relaxed
@given(st.lists(ref_records(), min_size=1, max_size=60), st.integers(1, 20),
       st.sampled_from(FLAG_VARIANTS))
def test_ref_block_round_trip_property(recs, interval, flags) -> None:
    recs = unique_sorted_refs(recs)
    for r in recs:
        r.update_index = 0
    _, data = _ref_block(recs, block_size=1 << 16, interval=interval)
    block = _load(data, flags=flags)
    assert list(iter_block(block, 20, flags)) == recs
    offs = _restart_offsets(block)
    assert offs == sorted(set(offs))


@relaxed
@given(st.lists(log_records(), min_size=1, max_size=40), st.sampled_from(FLAG_VARIANTS))
def test_log_block_round_trip_property(recs, flags) -> None:
    recs = unique_sorted_logs(recs)
    bw = BlockWriter(BLOCK_TYPE_LOG, 1 << 16, 0, 5, 20)
    for lg in recs:
        assert bw.add(lg.key(), lg.value_type, encode_log_value(lg, 20))
    block = _load(bw.finish(), flags=flags)
    assert list(iter_block(block, 20, flags)) == recs
    for i, lg in enumerate(recs):
        off, last = seek_in_block(block, lg.key(), 20)
        assert list(iter_block(block, 20, flags, off=off, last=last)) == recs[i:]


def test_index_block_round_trip() -> None:
    recs = [IndexRecord(b"refs/heads/%03d" % i, i * 4096) for i in range(30)]
    bw = BlockWriter(BLOCK_TYPE_INDEX, 4096, 0, 4, 20)
    for r in recs:
        assert bw.add(r.last_key, 0, bytes([r.offset // 4096]))   # varint < 128
    data = bw.finish()
    for flags in FLAG_VARIANTS:
        got = list(iter_block(_load(data, flags=flags), 20, flags))
        assert [(g.last_key, g.offset) for g in got] == [(r.last_key, i) for i, r in
                                                        enumerate(recs)]


def test_unwanted_block_type() -> None:
    logs = [LogRecord(b"refs/x", 1, 1, bytes(20), bytes(20), b"", b"", 0, 0, b"")]
    bw = BlockWriter(BLOCK_TYPE_LOG, 4096, 0, 16, 20)
    bw.add(logs[0].key(), 1, encode_log_value(logs[0], 20))
    data = bw.finish()
    src = BytesSource(data, "t")
    assert load_block_early_exit(src, 0, 0, 0, len(data), BLOCK_TYPE_REF) is None
    assert load_block_full_setup(src, 0, 0, 0, len(data), BLOCK_TYPE_REF) is None
    # early exit never inflates: a corrupt deflate stream is not noticed
    broken = data[:6] + b"\xff" * (len(data) - 6)
    src = BytesSource(broken, "t")
    assert load_block_early_exit(src, 0, 0, 0, len(broken), BLOCK_TYPE_REF) is None
    with pytest.raises(FormatError):
        load_block_full_setup(src, 0, 0, 0, len(broken), BLOCK_TYPE_REF)


def test_padding_detection() -> None:
    _, data = _ref_block(_refs(5))
    padded = data + bytes(1024 - len(data))
    assert _load(padded + b"r", block_size=1024).full_size == 1024
    # an unpadded block followed directly by another block
    assert _load(data + b"g\x00\x00\x10" + bytes(100), block_size=1024).full_size == len(data)


@pytest.mark.parametrize("flags", FLAG_VARIANTS[:2] + FLAG_VARIANTS[-2:])
def test_corrupt_blocks_raise_format_error(flags) -> None:
    _, data = _ref_block(_refs(40), interval=4)
    for i in range(len(data)):
        for mask in (0x01, 0x80, 0xFF):
            bad = bytearray(data)
            bad[i] ^= mask
            try:
                block = _load(bytes(bad), flags=flags)
                if block is not None:
                    list(iter_block(block, 20, flags))
            except FormatError:
                continue
            for scan in RESTART_SCANS.values():         # restart_key_in_place off, on
                try:
                    if block is not None:
                        seek_in_block(block, b"refs/heads/branch-00017", 20, scan)
                except FormatError:
                    pass
    for cut in range(len(data)):
        try:
            block = _load(data[:cut], flags=flags)
            if block is not None:
                list(iter_block(block, 20, flags))
        except FormatError:
            pass


def test_record_too_big_for_an_empty_block() -> None:
    bw = BlockWriter(BLOCK_TYPE_REF, 64, 0, 16, 20)
    assert not bw.add(b"refs/heads/" + b"y" * 60, 1, bytes(21))
    assert bw.entries == 0 and bw.restarts == []
