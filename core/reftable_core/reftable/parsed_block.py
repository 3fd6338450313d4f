"""The parsed reftable block (Block): where it lies and what its header and restart
table say, and the few reads of those (its stated length, a restart offset, its first key).

Contract: Block(typ, data, off, header_off, name, base=0) is built by block.py's loaders,
which give it the rest (end, restart_count, restart_start, full_size; see block.py for
what data and base hold under each mmap value). Offsets are relative to the block's
start; byte rel of the block is data[base + rel]. error(msg, rel) is the FormatError
naming the table and the absolute file offset; restart_offset(i) the i-th restart
point (FormatError outside the records); first_key() the key of the first record.

It is a module of its own, below loops.py and block.py, so that both can name the type
(the Cython build types the scans' and the record loops' block as it: parsed_block.pxd).
"""
from __future__ import annotations

from .basics import Buf, get_varint
from ..errors import FormatError


class Block:
    """A parsed block. data holds the (inflated) block, offsets relative to its start.
    Built from its header's place and type; _setup gives it the rest (end,
    restart_count, restart_start, full_size)."""

    __slots__ = (
        "base",
        "data",
        "end",
        "full_size",
        "header_off",
        "name",
        "off",
        "restart_count",
        "restart_start",
        "typ",
    )

    end: int                # start of the restart table = end of records
    restart_count: int
    restart_start: int      # = end
    full_size: int          # bytes to skip to reach the next block

    def __init__(self, typ: int, data: Buf, off: int, header_off: int, name: str,
                 base: int = 0) -> None:
        self.typ = typ
        self.data = data
        self.base = base                # index in data of the block's first byte
        self.off = off                  # absolute file offset of the block
        self.header_off = header_off    # file header size for the first block, else 0
        self.name = name

    @property
    def length(self) -> int:
        """The block length its header states (of a log block: inflated)."""
        d = self.data
        h = self.base + self.header_off
        return (d[h + 1] << 16) | (d[h + 2] << 8) | d[h + 3]

    def error(self, msg: str, rel: int | None = None) -> FormatError:
        return FormatError(msg, self.name, self.off + (rel if rel is not None else 0))

    def restart_offset(self, i: int) -> int:
        p = self.restart_start + 3 * i
        d = self.data
        q = self.base + p
        r = (d[q] << 16) | (d[q + 1] << 8) | d[q + 2]
        if r < self.header_off + 4 or r >= self.end:
            raise self.error(f"restart offset {r} outside the block's records", p)
        return r

    def first_key(self) -> bytes:
        key, _, _ = _decode_key_at(self, self.header_off + 4, b"")
        return key


def _decode_key_at(block: Block, off: int, last: bytes) -> tuple[bytes, int, int]:
    data = block.data
    base = block.base
    try:
        p, at = get_varint(data, base + off)
        s, at = get_varint(data, at)
    except FormatError:
        raise block.error("truncated record key", off) from None
    off = at - base
    nxt = off + (s >> 3)
    if p > len(last) or nxt > block.end or off > block.end:
        raise block.error("record key runs past the block or bad prefix length", off)
    key = bytes(last[:p]) + data[at:base + nxt]
    if not key:
        raise block.error("empty record key", off)
    return key, s & 7, nxt
