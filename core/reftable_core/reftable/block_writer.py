"""BlockWriter: pack prefix-compressed records into one reftable block.

Contract: BlockWriter(typ, block_size, header_off, restart_interval, hash_size,
compression_level, keys) collects records. add(key, extra, value, prefix) is the one
append step: it puts key into a key buffer from keys (a buffers.KeyBuffers: a new
one per record under block_writer_scratch=off, else the scratch buffer the table
writer keeps for all its block writers; default: a scratch of its own), then appends
it (value type extra, encoded value) and returns True,
or returns False when the record does not fit, like git's block_writer_add
refusing it; the caller flushes the block and retries in a fresh one (the table
writer raises EntryTooBigError when a record does not fit an empty block).
Keys must be non-empty and increasing.
A restart point (prefix length 0) is written every restart_interval records
and wherever a key shares nothing with the previous one, at most MAX_RESTARTS
per block; the key's common prefix length with the previous key may be given
precomputed (it is trusted). seal() appends the restart table and count and
sets the block length; finish() is seal() plus, for log blocks,
deflate_block(). The first header_off bytes of buf are left for the file
header (the table writer fills them in). common_prefix_len() is the prefix
helper; varints come from basics.put_varint.
"""
from __future__ import annotations

import zlib

from .basics import put_varint
from .buffers import KeyBuffers
from .record import BLOCK_TYPE_LOG

MAX_RESTARTS = 65535


def common_prefix_len(a: bytes | bytearray, b: bytes | bytearray) -> int:
    """Length of the common prefix, in a constant number of big-int operations."""
    n = len(a)
    m = len(b)
    if m < n:       # (not min(): this is on the writer's per-record path)
        n = m
    x = int.from_bytes(a[:n], "big") ^ int.from_bytes(b[:n], "big")
    return n - 1 - ((x.bit_length() - 1) >> 3) if x else n


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
        "key_buffer",
        "last_key",
        "restart_interval",
        "restarts",
        "room",
        "typ",
    )

    def __init__(self, typ: int, block_size: int, header_off: int = 0,
                 restart_interval: int = 16, hash_size: int = 20,
                 compression_level: int = 9, keys: KeyBuffers | None = None) -> None:
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
        # bytes left for records: block_size minus the records so far, their
        # restart entries and the 2-byte restart count
        self.room = block_size - len(self.buf) - 2
        self.entries = 0
        self.last_key = b""
        self.key_buffer = (keys if keys is not None else KeyBuffers(True)).take

    def add(self, key: bytes, extra: int, value: bytes, prefix: int | None = None) -> bool:
        """Append one record (key, value type, encoded value); False when it does not
        fit. prefix, if given, is key's common prefix length with the block's last key.

        Flag block_writer_scratch (upstream d94ac23d3b, block_writer_add in
        reftable/block.c) is where key_buffer comes from: off, a new buffer per record

            - struct reftable_buf key = REFTABLE_BUF_INIT;
            - err = reftable_record_key(rec, &key);

        on, the block writer's one buffer, kept across its blocks

            + err = reftable_record_key(rec, &w->buf);

        either way filled with the key (reset, add), checked, prefix-compressed against
        last_key and appended from (reftable_encode_key). git then copies the key into
        last_key (block_writer_register_restart); last_key here is the caller's
        immutable key itself, in both.
        """
        k = self.key_buffer()
        k[:] = key
        if not k:
            raise ValueError("empty record key")
        entries = self.entries
        if not entries % self.restart_interval:
            p = 0
        elif prefix is None:
            p = common_prefix_len(self.last_key, k)
        else:
            p = prefix
        s = len(k) - p
        t = (s << 3) | extra
        need = s + len(value)
        if p < 0x80 and t < 0x80:
            head = None
            need += 2
        else:
            head = put_varint(p) + put_varint(t)
            need += len(head)
        restart = not p and len(self.restarts) < MAX_RESTARTS
        if restart:
            need += 3
        room = self.room
        if need > room:
            return False
        self.room = room - need
        buf = self.buf
        if restart:
            self.restarts.append(len(buf))
        if head is None:
            buf.append(p)
            buf.append(t)
        else:
            buf += head
        buf += k[p:] if p else k
        buf += value
        self.last_key = key
        self.entries = entries + 1
        return True

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
