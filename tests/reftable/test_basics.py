"""basics: git's varint (+1-biased, MSB first) and big-endian ints."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from reftable_core.reftable.basics import (
    get_be24,
    get_be32,
    get_be64,
    get_varint,
    put_varint,
)
from reftable_core.reftable.block_writer import common_prefix_len
from reftable_core.errors import FormatError, ReftableError
from tests.helpers.table_strategies import relaxed


@pytest.mark.parametrize("value,encoded", [
    (0, b"\x00"), (1, b"\x01"), (127, b"\x7f"),
    (128, b"\x80\x00"),            # the +1 bias: not LEB128 (which would be 80 01)
    (129, b"\x80\x01"), (255, b"\x80\x7f"), (256, b"\x81\x00"),
    (16511, b"\xff\x7f"), (16512, b"\x80\x80\x00"),
    ((1 << 64) - 1, b"\x80\xfe\xfe\xfe\xfe\xfe\xfe\xfe\xfe\x7f"),
])
def test_varint_known_encodings(value: int, encoded: bytes) -> None:
    assert put_varint(value) == encoded
    assert get_varint(encoded, 0) == (value, len(encoded))


@relaxed
@given(st.integers(min_value=0, max_value=(1 << 64) - 1), st.binary(max_size=4))
def test_varint_round_trip(value: int, tail: bytes) -> None:
    enc = put_varint(value)
    assert get_varint(b"xy" + enc + tail, 2) == (value, 2 + len(enc))


@pytest.mark.parametrize("bad", [b"", b"\x80", b"\xff\xff", b"\x80" * 11 + b"\x00",
                                 b"\x80\xfe\xfe\xfe\xfe\xfe\xfe\xfe\xfe\xff\x00"])
def test_varint_bad_input_raises_format_error(bad: bytes) -> None:
    with pytest.raises(FormatError):
        get_varint(bad, 0)


def _varint_lengths() -> list[int]:
    """The least and the greatest value of each varint length, 1 to 10 bytes: n bytes
    hold B(n) to B(n + 1) - 1, B(1) = 0 and B(n + 1) = B(n) + 128**n (the +1 bias)."""
    out, lo = [], 0
    for n in range(1, 11):
        hi = min(lo + 128 ** n, 1 << 64) - 1
        assert len(put_varint(lo)) == len(put_varint(hi)) == n
        out += [lo, hi]
        lo = hi + 1
    return out


def test_varint_every_length_in_every_container(tmp_path) -> None:
    """Every length's least and greatest value, read from a bytes, a bytearray, a
    memoryview and a map (the Cython build reads a bytes' and a map's varints of up to
    nine bytes through their pointer: cbytes.pxd's varint_at), at an offset, and every
    truncation of each a FormatError."""
    import mmap
    for value in _varint_lengths():
        enc = put_varint(value)
        data = b"ab" + enc + b"\x01"
        path = tmp_path / "v"
        path.write_bytes(data)
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            for buf in (data, bytearray(data), memoryview(data), m):
                assert get_varint(buf, 2) == (value, 2 + len(enc)), (value, type(buf))
        for cut in range(1, len(enc)):
            with pytest.raises(FormatError):
                get_varint(b"ab" + enc[:cut], 2)
    assert _varint_lengths()[-1] == (1 << 64) - 1


def test_varint_tables_agree_with_the_loop() -> None:
    """The tables, filled on first use, give the loop's encoding for every value they
    cover (every one- and two-byte varint, and the three-byte ones through _LEAD),
    asked twice: once filling, once from the table."""
    from reftable_core.reftable import basics
    values = [*range(0, basics._NSHORT + 300), *range(basics._NSHORT + 300, basics._NLEAD + 2, 61),
              basics._NLEAD - 1, basics._NLEAD]
    for _ in range(2):
        for v in values:
            assert put_varint(v) == basics._put_varint(v), v


def test_varint_range() -> None:
    with pytest.raises(ValueError):
        put_varint(-1)
    with pytest.raises(ValueError):
        put_varint(1 << 64)


@relaxed
@given(st.integers(0, (1 << 64) - 1))
def test_be_ints(v: int) -> None:
    for get, bits in ((get_be24, 24), (get_be32, 32), (get_be64, 64)):
        x = v & ((1 << bits) - 1)
        b = x.to_bytes(bits // 8, "big")
        assert get(b"!" + b, 1) == (x, 1 + bits // 8)
        with pytest.raises(ReftableError):
            get(b[:-1], 0)


@relaxed
@given(st.binary(max_size=40), st.binary(max_size=40))
def test_common_prefix(a: bytes, b: bytes) -> None:
    """The same length for bytes and bytearrays on either side (the Cython build compares
    their bytes in C, the interpreter and mypyc through two big ints)."""
    n = common_prefix_len(a, b)
    assert a[:n] == b[:n]
    assert n == min(len(a), len(b)) or a[n] != b[n]
    for x, y in ((bytearray(a), b), (a, bytearray(b)), (bytearray(a), bytearray(b))):
        assert common_prefix_len(x, y) == n
