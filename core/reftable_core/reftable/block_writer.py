"""BlockWriter: pack prefix-compressed records into one reftable block.

Contract: BlockWriter(typ, block_size, header_off, restart_interval, hash_size,
compression_level) collects records; add_records(keys, types, values, start)
is the one append loop: it appends keys[i] (value type types[i], encoded
value values[i]) for i = start, start+1, ... while they fit and returns the
index of the first record it did not append (len(keys) when all fit), like
git's block_writer_add refusing a record; the caller flushes the block and
retries in a fresh one (the table writer raises EntryTooBigError when a record
does not fit an empty block). add(key, extra, value) is add_records for one
record and returns whether it fit. Keys must be non-empty and increasing.
A restart point (prefix length 0) is written every restart_interval records
and wherever a key shares nothing with the previous one, at most MAX_RESTARTS
per block; add_records may be given the keys' prefix lengths precomputed. seal() appends the restart table and count and sets the block
length; finish() is seal() plus, for log blocks, deflate_block(). The first
header_off bytes of buf are left for the file header (the table writer fills
them in). varint() and common_prefix_len() are the encoding helpers.
"""
from __future__ import annotations

import zlib
from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate

from .basics import put_varint
from .record import BLOCK_TYPE_LOG

MAX_RESTARTS = 65535
_SHORT_VARINT = [put_varint(i) for i in range(1 << 14)]     # one and two bytes long


def varint(v: int) -> bytes:
    """put_varint with a table for values < 2**14."""
    return _SHORT_VARINT[v] if v < 16384 else put_varint(v)


def common_prefix_len(a: bytes, b: bytes) -> int:
    """Length of the common prefix, in a constant number of big-int operations."""
    n = min(len(b), len(a))
    if not n:
        return 0
    x = int.from_bytes(a[:n], "big") ^ int.from_bytes(b[:n], "big")
    if not x:
        return n
    return n - 1 - ((x.bit_length() - 1) >> 3)


def deflate_block(sealed: bytes, header_off: int, level: int) -> bytes:
    """A sealed log block as written: everything after the 4-byte block header
    deflated (pure, so it can run in a worker thread: zlib releases the GIL)."""
    skip = header_off + 4
    return sealed[:skip] + zlib.compress(sealed[skip:], level)


class BlockWriter:
    """Accumulates one block in memory; see the module contract."""

    __slots__ = (
        "block_size",
        "buf",
        "compression_level",
        "entries",
        "hash_size",
        "header_off",
        "last_key",
        "restart_interval",
        "restarts",
        "typ",
    )

    def __init__(self, typ: int, block_size: int, header_off: int = 0,
                 restart_interval: int = 16, hash_size: int = 20,
                 compression_level: int = 9) -> None:
        if restart_interval < 1:
            raise ValueError("restart_interval must be >= 1")
        self.typ = typ
        self.block_size = block_size
        self.header_off = header_off
        self.restart_interval = restart_interval
        self.hash_size = hash_size
        self.compression_level = compression_level
        # the file header (if any) is filled in by the table writer
        self.buf = bytearray(header_off)
        self.buf += bytes((typ, 0, 0, 0))
        self.restarts: list[int] = []
        self.entries = 0
        self.last_key = b""

    def add(self, key: bytes, extra: int, value: bytes) -> bool:
        """Add one record (key, value type, encoded value); False when it does not fit."""
        return self.add_records((key,), (extra,), (value,)) == 1

    def add_records(self, keys: Sequence[bytes], types: Sequence[int],
                    values: Sequence[bytes], start: int = 0,
                    prefixes: Sequence[int] | None = None) -> int:
        """Append records from index start while they fit; the index of the first left out.

        prefixes, if given, are the keys' common prefix lengths with the key
        before each (keys[i - 1]; the block's last key for keys[0]), computed
        faster elsewhere (the dataset generator uses numpy); they are trusted.

        Works a window of records at a time (the window doubles while all of
        it fits): prefix lengths, restart points and encoded records by list
        comprehensions, then the first record that does not fit by bisecting
        the running total of the bytes each takes (its 3-byte restart entry
        included) -- exactly where a record-by-record check would stop.
        """
        ri = self.restart_interval
        buf = self.buf
        restarts = self.restarts
        sv = _SHORT_VARINT
        nsv = len(sv)
        n = len(keys)
        i = start
        window = 32
        while i < n:
            w = min(n - i, window)
            ks = keys[i:i + w]
            if not all(ks):
                raise ValueError("empty record key")
            if prefixes is not None:
                ps = list(prefixes[i:i + w])
            else:
                prev = [self.last_key]
                prev += ks[:-1]
                # common prefix with the previous key: the first differing byte of
                # the two as big-endian ints (common_prefix_len, inline)
                ps = [(m - ((x.bit_length() + 7) >> 3))
                      if (x := int.from_bytes(a[:(m := min(len(a), len(b)))], "big")
                          ^ int.from_bytes(b[:m], "big")) else m
                      for a, b in zip(prev, ks)]
            for j in range((-self.entries) % ri, w, ri):
                ps[j] = 0                   # every restart_interval-th record of the block
            recs = [(sv[p] if p < nsv else varint(p))
                    + (sv[t] if (t := ((len(k) - p) << 3) | vt) < nsv else varint(t))
                    + (k[p:] if p else k) + v
                    for k, p, vt, v in zip(ks, ps, types[i:i + w], values[i:i + w])]
            nrest = len(restarts)
            is_restart = [not p for p in ps]
            if nrest + w > MAX_RESTARTS:    # no restart entries beyond the maximum
                left = MAX_RESTARTS - nrest
                for j, r in enumerate(is_restart):
                    if r:
                        is_restart[j] = left > 0
                        left -= 1
            lens = list(map(len, recs))
            total = list(accumulate([ln + 3 * r for ln, r in zip(lens, is_restart)]))
            cnt = bisect_right(total, self.block_size - len(buf) - 2 - 3 * nrest)
            if not cnt:
                break
            restarts += [off for off, r in zip(accumulate(lens[:cnt], initial=len(buf)),
                                               is_restart[:cnt]) if r]
            buf += b"".join(recs[:cnt])
            self.entries += cnt
            self.last_key = ks[cnt - 1]
            i += cnt
            if cnt < w:
                break
            window *= 2
        return i

    def seal(self) -> bytes:
        """Append restarts and count, set block_len: the block before any deflating."""
        buf = self.buf
        for r in self.restarts:
            buf += r.to_bytes(3, "big")
        buf += len(self.restarts).to_bytes(2, "big")
        h = self.header_off
        buf[h + 1:h + 4] = len(buf).to_bytes(3, "big")
        return bytes(buf)

    def finish(self) -> bytes:
        """The block as written: seal(), and deflate_block() for log blocks."""
        sealed = self.seal()
        if self.typ == BLOCK_TYPE_LOG:
            return deflate_block(sealed, self.header_off, self.compression_level)
        return sealed
