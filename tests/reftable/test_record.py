"""record: round trips, prefix compression, bad input."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reftable_core.errors import FormatError
from reftable_core.reftable.record import (
    BLOCK_TYPE_INDEX,
    BLOCK_TYPE_LOG,
    BLOCK_TYPE_OBJ,
    BLOCK_TYPE_REF,
    IndexRecord,
    LogRecord,
    ObjRecord,
    RefRecord,
    decode_key,
    decode_record,
    encode_key,
    encode_record,
    log_key,
    realloc_refname,
    record_type,
    skip_value,
    split_log_key,
)
from tests.helpers.table_strategies import index_records, log_records, obj_records, ref_records, relaxed

HS = st.sampled_from([20, 32])


def _round_trip(rec, prev_key: bytes, hash_size: int, min_ui: int = 0):
    buf = b"junk" + encode_record(rec, prev_key, hash_size, min_ui) + b"tail"
    got, key, off = decode_record(record_type(rec), buf, 4, prev_key, hash_size, min_ui)
    assert off == len(buf) - 4
    assert key == rec.key()
    # skip_value lands on the same offset without decoding the value
    k2, vt, voff = decode_key(buf, 4, prev_key)
    assert k2 == key
    assert skip_value(record_type(rec), buf, voff, vt, hash_size) == off
    return got


@relaxed
@given(st.data(), HS, st.binary(max_size=20))
def test_ref_round_trip(data, hs: int, prev: bytes) -> None:
    rec = data.draw(ref_records(hs))
    min_ui = data.draw(st.integers(0, rec.update_index))
    assert _round_trip(rec, prev, hs, min_ui) == rec


@relaxed
@given(st.data(), HS, st.binary(max_size=20))
def test_log_round_trip(data, hs: int, prev: bytes) -> None:
    rec = data.draw(log_records(hs))
    assert _round_trip(rec, prev, hs) == rec


@relaxed
@given(obj_records, st.binary(max_size=8))
def test_obj_round_trip(rec: ObjRecord, prev: bytes) -> None:
    assert _round_trip(rec, prev, 20) == rec


@relaxed
@given(index_records, st.binary(max_size=8))
def test_index_round_trip(rec: IndexRecord, prev: bytes) -> None:
    assert _round_trip(rec, prev, 20) == rec


def test_prefix_compression() -> None:
    enc, restart = encode_key(b"refs/heads/main", b"refs/heads/maint", 1)
    assert enc == bytes([15, (1 << 3) | 1]) + b"t" and not restart
    enc, restart = encode_key(b"", b"refs/x", 3)
    assert enc == bytes([0, (6 << 3) | 3]) + b"refs/x" and restart
    assert decode_key(enc, 0, b"whatever") == (b"refs/x", 3, len(enc))


def test_log_key_orders_newest_first() -> None:
    assert log_key(b"a", 5) < log_key(b"a", 4) < log_key(b"a/b", 9)
    assert split_log_key(log_key(b"refs/x", 77)) == (b"refs/x", 77)
    with pytest.raises(FormatError):
        split_log_key(b"short")


def test_value_types() -> None:
    oid, peeled = b"\x01" * 20, b"\x02" * 20
    for rec in (RefRecord(b"refs/d", 3, 0), RefRecord(b"refs/a", 3, 1, oid),
                RefRecord(b"refs/t", 3, 2, oid, peeled),
                RefRecord(b"HEAD", 3, 3, target=b"refs/heads/main")):
        assert _round_trip(rec, b"", 20, 1) == rec
    lg = LogRecord(b"refs/x", 9, 1, oid, peeled, b"N", b"e@x", 1700000000, -480, "ü\n".encode())
    assert _round_trip(lg, b"", 20) == lg
    assert _round_trip(LogRecord(b"refs/x", 9, 0), b"", 20) == LogRecord(b"refs/x", 9, 0)
    assert _round_trip(ObjRecord(b"\x01\x02", list(range(0, 9000, 1000))), b"", 20).offsets[-1] \
        == 8000


@pytest.mark.parametrize("typ", [BLOCK_TYPE_REF, BLOCK_TYPE_LOG, BLOCK_TYPE_OBJ, BLOCK_TYPE_INDEX])
@given(data=st.data())
@settings(relaxed, max_examples=40)
def test_truncated_records_raise_format_error(typ: int, data) -> None:
    rec = data.draw({BLOCK_TYPE_REF: ref_records(), BLOCK_TYPE_LOG: log_records(),
                     BLOCK_TYPE_OBJ: obj_records, BLOCK_TYPE_INDEX: index_records}[typ])
    enc = encode_record(rec, b"", 20)
    cut = data.draw(st.integers(0, len(enc) - 1))
    try:
        got, _, off = decode_record(typ, enc[:cut], 0, b"", 20)
    except FormatError:
        return
    # a shorter prefix may still decode (e.g. an obj record), but never past the data
    assert off <= cut


@relaxed
@given(st.integers(0, 4), st.binary(max_size=64), st.binary(max_size=8))
def test_garbage_raises_only_format_error(typ_i: int, garbage: bytes, prev: bytes) -> None:
    typ = [BLOCK_TYPE_REF, BLOCK_TYPE_LOG, BLOCK_TYPE_OBJ, BLOCK_TYPE_INDEX, ord("x")][typ_i]
    try:
        decode_record(typ, garbage, 0, prev, 20)
    except FormatError:
        pass


def test_bad_prefix_length() -> None:
    with pytest.raises(FormatError):
        decode_key(bytes([5, 1 << 3]) + b"x", 0, b"ab")


def test_realloc_refname_makes_a_new_name_of_the_key() -> None:
    """ref_name_alloc=off's realloc: NULL (None) or a name to let go, a new bytes of the
    key either way, equal to what ref_name_alloc=on's bytes(key) makes."""
    key = bytearray(b"refs/heads/main")
    for old in (None, b"refs/heads/old"):
        name = realloc_refname(old, key)
        assert type(name) is bytes and name == bytes(key)
        key[-1:] = b"X"                 # the loop's key buffer is reused: the name is a copy
        assert name == b"refs/heads/main"
        key[-1:] = b"n"
