"""odb.delta: git's delta format, round trips and bad deltas."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reftable_core.errors import FormatError
from reftable_core.odb.delta import apply_delta, decode_size, delta_sizes, encode_size, make_delta


@given(st.integers(min_value=0, max_value=2**40))
def test_size_round_trip(n: int) -> None:
    enc = encode_size(n)
    assert decode_size(enc, 0) == (n, len(enc))


def test_copy_and_insert() -> None:
    base = b"0123456789abcdef"
    d = make_delta(base, b"", [("copy", 10, 6), ("insert", b"XY"), ("copy", 0, 3)])
    d = encode_size(len(base)) + encode_size(11) + d[2:]
    assert apply_delta(base, d) == b"abcdefXY012"


def test_copy_size_zero_means_64k() -> None:
    base = bytes(range(256)) * 300
    d = encode_size(len(base)) + encode_size(0x10000) + bytes([0x80])   # offset 0, size 0
    assert apply_delta(base, d) == base[:0x10000]


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=300), st.lists(st.tuples(st.integers(0, 299), st.integers(1, 299),
                                                   st.binary(min_size=1, max_size=40)), max_size=8))
def test_random_copies(base: bytes, ops: list) -> None:
    ins = []
    expect = bytearray()
    for o, s, lit in ops:
        if base and o < len(base):
            s = min(s, len(base) - o)
            ins.append(("copy", o, s))
            expect += base[o:o + s]
        ins.append(("insert", lit))
        expect += lit
    d = make_delta(base, bytes(expect), ins)
    assert apply_delta(base, d) == bytes(expect)
    assert delta_sizes(d)[:2] == (len(base), len(expect))


@pytest.mark.parametrize("delta,what", [
    (encode_size(4) + encode_size(8) + bytes([0x91, 2, 8]), "copy past"),        # off 2 size 8
    (encode_size(5) + encode_size(2) + bytes([0x90, 1]), "base size"),           # base size wrong
    (encode_size(4) + encode_size(3) + bytes([2]) + b"ab", "result size"),       # too short
    (encode_size(4) + encode_size(1) + bytes([2]) + b"ab", "exceeds"),           # too long
    (encode_size(4) + encode_size(2) + bytes([0]), "opcode 0"),
    (encode_size(4) + encode_size(5) + bytes([5]) + b"ab", "truncated delta insert"),
    (encode_size(4) + encode_size(5) + bytes([0x91]), "truncated delta copy"),
    (b"\x84", "truncated delta size"),
])
def test_bad_deltas(delta: bytes, what: str) -> None:
    with pytest.raises(FormatError, match=what):
        apply_delta(b"wxyz", delta)


def test_any_buffer_gives_the_same_result() -> None:
    """base and delta as bytes, bytearray or memoryview (a pack's map): one result, a bytes."""
    base = bytes(range(256)) * 4
    want = base[1000:1020] + b"XY" + base[3:303]
    d = make_delta(base, want, [("copy", 1000, 20), ("insert", b"XY"), ("copy", 3, 300)])
    for b in (base, bytearray(base), memoryview(base)):
        for dd in (d, bytearray(d), memoryview(d)):
            got = apply_delta(b, dd)
            assert type(got) is bytes and got == want


def test_a_copy_offset_with_its_top_bit_set_is_past_the_end_not_negative() -> None:
    """The fourth offset byte is shifted by 24: 0xff there is 4278190080, past any small
    base (the Cython build shifts it as a Py_ssize_t: a C int would overflow)."""
    d = encode_size(4) + encode_size(1) + bytes([0x80 | 0x08 | 0x10, 0xFF, 1])
    with pytest.raises(FormatError, match=r"\(4278190080\+1 > 4\)"):
        apply_delta(b"wxyz", d)


@pytest.mark.parametrize("size", [2**40, 2**64, 2**70])
def test_a_declared_result_beyond_the_limit_is_refused_before_anything_is_made(size: int) -> None:
    d = encode_size(4) + encode_size(size) + bytes([0x90, 1])
    with pytest.raises(FormatError, match="delta result"):
        apply_delta(b"wxyz", d, limit=1 << 20)


def test_a_declared_size_the_instructions_never_fill_is_not_allocated() -> None:
    """A 9-byte delta declaring 900 MB (under the limit) that copies one byte: the error at
    its end, and the memory taken stays near what was produced (the Cython build makes
    its result at once only up to the base and delta's size)."""
    import tracemalloc

    d = encode_size(4) + encode_size(900 << 20) + bytes([0x90, 1])
    tracemalloc.start()
    try:
        with pytest.raises(FormatError, match=r"delta result size 1 != declared 943718400"):
            apply_delta(b"wxyz", d)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20
