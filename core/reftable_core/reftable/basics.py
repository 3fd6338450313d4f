"""Primitive encodings of the reftable format (sans-IO).

git's varint (the +1-biased base-128 form, most significant group first, NOT
LEB128) and big-endian 24/32/64-bit integers (the header and footer fields). Decoders take (buf, off) and
return (value, new_off); they raise FormatError on truncation/overflow.
"""
from __future__ import annotations

import mmap

from ..errors import FormatError

# a block's data: bytes, or the file's map under mmap=on (indexing gives ints either way)
Buf = bytes | bytearray | memoryview | mmap.mmap

MAX_U64 = (1 << 64) - 1      # the largest update index; log keys store MAX_U64 - index
_MAX_VARINT_BYTES = 10


def _put_varint(value: int) -> bytes:
    out = [value & 0x7F]
    value >>= 7
    while value:
        value -= 1
        out.append(0x80 | (value & 0x7F))
        value >>= 7
    out.reverse()
    return bytes(out)


# every one- and two-byte varint (v < 2**14), and the same with the high bit
# set on every byte: the leading bytes of a longer varint (v < 2**21); filled on
# first use, value by value (a reading command encodes none: building all 2 x 16384
# at import was a twelfth of a command's start-up)
_NSHORT = 1 << 14
_SHORT: dict[int, bytes] = {}
_LEAD: dict[int, bytes] = {}
_NLEAD = (_NSHORT + 1) << 7


def _short(v: int) -> bytes:
    """The varint of v < 2**14, remembered in _SHORT."""
    b = bytes((v,)) if v < 128 else bytes((0x80 | ((v >> 7) - 1), v & 0x7F))
    _SHORT[v] = b
    return b


def _lead(v: int) -> bytes:
    """The varint of v < 2**14 with the high bit set on every byte, remembered in _LEAD."""
    b = (bytes((0x80 | v,)) if v < 128
         else bytes((0x80 | ((v >> 7) - 1), 0x80 | (v & 0x7F))))
    _LEAD[v] = b
    return b


def put_varint(value: int) -> bytes:
    """Encode value (0 <= value < 2**64) as git's varint (by table below 2**21)."""
    if 0 <= value < _NSHORT:
        try:
            return _SHORT[value]
        except KeyError:
            return _short(value)
    if _NSHORT <= value < _NLEAD:
        hi = (value >> 7) - 1
        lo = value & 0x7F
        try:
            lead = _LEAD[hi]
        except KeyError:
            lead = _lead(hi)
        try:
            return lead + _SHORT[lo]
        except KeyError:
            return lead + _short(lo)
    if value < 0 or value >= 1 << 64:
        raise ValueError(f"varint out of range: {value}")
    return _put_varint(value)


def get_varint(buf: Buf, off: int) -> tuple[int, int]:
    """Decode git's varint at buf[off:]; return (value, new_off)."""
    n = len(buf)
    if off >= n:
        raise FormatError("truncated varint", offset=off)
    c = buf[off]
    off += 1
    val = c & 0x7F
    count = 1
    while c & 0x80:
        if off >= n:
            raise FormatError("truncated varint", offset=off)
        count += 1
        if count > _MAX_VARINT_BYTES:
            raise FormatError("varint too long", offset=off)
        c = buf[off]
        off += 1
        val = ((val + 1) << 7) | (c & 0x7F)
    if val >= 1 << 64:
        raise FormatError("varint overflows 64 bits", offset=off)
    return val, off


def _get_be(buf: Buf, off: int, width: int) -> tuple[int, int]:
    end = off + width
    if off < 0 or end > len(buf):
        raise FormatError(f"truncated {8 * width}-bit integer", offset=off)
    return int.from_bytes(buf[off:end], "big"), end


def get_be24(buf: Buf, off: int) -> tuple[int, int]:
    return _get_be(buf, off, 3)


def get_be32(buf: Buf, off: int) -> tuple[int, int]:
    return _get_be(buf, off, 4)


def get_be64(buf: Buf, off: int) -> tuple[int, int]:
    return _get_be(buf, off, 8)
