"""Bounded zlib inflation for packs and loose objects (sans-IO, on any buffer).

Contract: nothing here ever produces more than the caller asked for, so a hostile
stream cannot balloon memory, and every loop feeds input forward, so none hangs.
check_size(size, limit, what, path, offset) raises FormatError when a declared size
is over the allocation limit (MAX_OBJECT_SIZE by default: git itself has none, it
mallocs whatever a header declares). inflate_exact(buf, pos, end, size, path) is the
stream at buf[pos:end] that must inflate to exactly size bytes and end there;
inflate_prefix(buf, pos, end, want, path) is its first min(want, all) bytes, however
many compressed bytes they take (a dynamic Huffman table can span hundreds).
Errors name path and pos (ZlibError for a corrupt stream).
"""
from __future__ import annotations

import mmap
import zlib

from ..errors import FormatError, ZlibError

Buf = bytes | bytearray | memoryview | mmap.mmap

MAX_OBJECT_SIZE = 1 << 30       # bytes any one object, or delta, may allocate
_FEED = 65536                   # compressed bytes fed per step after the first


def check_size(size: int, limit: int, what: str, path: str | None, offset: int) -> None:
    if size > limit:
        raise FormatError(f"{what} declares {size} bytes, over the limit of {limit} "
                          "(max_object_size)", path, offset)


def inflate_exact(buf: Buf, pos: int, end: int, size: int, path: str | None) -> bytes:
    """Inflate the zlib stream at buf[pos:end]; it must produce exactly size bytes.
    The first step feeds about as many compressed bytes as the object could need."""
    d = zlib.decompressobj()
    want = size + 1                 # one byte more tells "too long" from "exact"
    q = min(end, pos + size + (size >> 3) + 64)
    try:
        out = d.decompress(buf[pos:q], want)
        if not d.eof and len(out) < want:
            parts = [out]
            total = len(out)
            while not d.eof and total < want:
                tail = d.unconsumed_tail
                if tail:
                    more = d.decompress(tail, want - total)
                elif q < end:
                    p, q = q, min(end, q + _FEED)
                    more = d.decompress(buf[p:q], want - total)
                else:
                    raise FormatError("truncated zlib stream", path, pos)
                parts.append(more)
                total += len(more)
            out = b"".join(parts)
    except zlib.error as e:
        raise ZlibError(f"bad zlib stream: {e}", path, pos) from None
    if len(out) != size or not d.eof:
        raise FormatError(f"inflated size mismatch (header says {size}, got "
                          f"{min(len(out), size)}{'' if d.eof else '+'})", path, pos)
    return out


def inflate_prefix(buf: Buf, pos: int, end: int, want: int, path: str | None) -> bytes:
    """The first want bytes the zlib stream at buf[pos:end] inflates to (fewer only
    when the stream ends first), feeding 64, 128, ... compressed bytes as needed."""
    d = zlib.decompressobj()
    parts: list[bytes] = []
    total = 0
    p = pos
    step = 64
    try:
        while total < want and not d.eof:
            tail = d.unconsumed_tail
            if tail:
                more = d.decompress(tail, want - total)
            elif p < end:
                p, q = min(end, p + step), p
                more = d.decompress(buf[q:p], want - total)
                step = min(2 * step, _FEED)
            else:
                raise FormatError("truncated zlib stream", path, pos)
            parts.append(more)
            total += len(more)
    except zlib.error as e:
        raise ZlibError(f"bad zlib stream: {e}", path, pos) from None
    return b"".join(parts)
