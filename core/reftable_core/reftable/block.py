"""Reftable blocks: the block reader / record iterators.

Contract.
Reader: a BlockLoader (chosen from flags.block_type_early_exit and flags.mmap)
turns (source, offset) into a parsed Block -- header, inflated log data, restart
table -- or None when past the end / of an unwanted type. seek_in_block()
binary-searches the restart points and scans linearly; record_loop(typ, flags)
returns the generator function that decodes a block's records sequentially
(loops.py's variant for flags.block_key_swap, flags.ref_name_alloc and flags.mmap).
All offsets in a Block are relative to the block start (which, for the block
at file offset 0, includes the file header). Block.data is what the source
handed out, uncopied, under mmap=on (a memoryview into MmapSource's map; the
record loops copy each field out of it, so no record holds a view), and bytes
under mmap=off (PreadSource's fresh buffer; a view from another source is
copied once). Log blocks are always inflated into bytes. Errors are FormatError
with the table name and the absolute file offset.
"""
from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator
from functools import partial

from .basics import Buf, get_varint
from ..counters import WORK
from ..errors import FormatError, ZlibError
from ..flags import Flags
from .loops import RECORD_LOOPS, RecordLoop
from .record import (
    BLOCK_TYPE_INDEX,
    BLOCK_TYPE_LOG,
    BLOCK_TYPE_REF,
    BLOCK_TYPES,
    skip_value,
)

DEFAULT_BLOCK_SIZE = 4096
MAX_BLOCK_SIZE = (1 << 24) - 1


# ============================================================== reader
class Block:
    """A parsed block. data holds the (inflated) block, offsets relative to its start."""

    __slots__ = (
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

    def __init__(self, typ: int, data: Buf, off: int, header_off: int, end: int,
                 restart_count: int, full_size: int, name: str) -> None:
        self.typ = typ
        self.data = data
        self.off = off                  # absolute file offset of the block
        self.header_off = header_off    # file header size for the first block, else 0
        self.end = end                  # start of the restart table = end of records
        self.restart_count = restart_count
        self.restart_start = end
        self.full_size = full_size      # bytes to skip to reach the next block
        self.name = name

    @property
    def records_start(self) -> int:
        return self.header_off + 4

    def error(self, msg: str, rel: int | None = None) -> FormatError:
        return FormatError(msg, self.name, self.off + (rel if rel is not None else 0))

    def restart_offset(self, i: int) -> int:
        p = self.restart_start + 3 * i
        d = self.data
        r = (d[p] << 16) | (d[p + 1] << 8) | d[p + 2]
        if r < self.header_off + 4 or r >= self.end:
            raise self.error(f"restart offset {r} outside the block's records", p)
        return r

    def restart_offsets(self) -> list[int]:
        return [self.restart_offset(i) for i in range(self.restart_count)]

    def first_key(self) -> bytes:
        key, _, _ = _decode_key_at(self, self.header_off + 4, b"")
        return key


def _decode_key_at(block: Block, off: int, last: bytes) -> tuple[bytes, int, int]:
    data = block.data
    try:
        p, off = get_varint(data, off)
        s, off = get_varint(data, off)
    except FormatError:
        raise block.error("truncated record key", off) from None
    nxt = off + (s >> 3)
    if p > len(last) or nxt > block.end or off > block.end:
        raise block.error("record key runs past the block or bad prefix length", off)
    key = bytes(last[:p]) + bytes(data[off:nxt])
    if not key:
        raise block.error("empty record key", off)
    return key, s & 7, nxt


BlockLoader = Callable[..., "Block | None"]


def _read_header(source, off: int, header_off: int, guess: int,
                 limit: int) -> tuple[Buf, int]:
    data = source.read(off, min(guess, limit - off))
    WORK.blocks_read += 1
    if len(data) < header_off + 4:
        raise FormatError("truncated block header", source.name, off)
    return data, data[header_off]


def _setup(source, data: Buf, typ: int, off: int, header_off: int, table_block_size: int,
           guess: int, limit: int, views: bool) -> Block:
    """Everything after the type byte: length, re-read, inflate, restart table.

    views (flag mmap, seed 004 4/4): on, the block keeps the source's data as handed
    out (`dest->data = b->data + off;`: a view into the map, no copy per block);
    off, the data is bytes (`dest->data = reftable_malloc(size); pread_in_full(...)`:
    PreadSource already returns a fresh bytes per read; another source's view is
    copied so that the bytes-only record loops see bytes). git's mmap=off
    file_return_block also memset(0xff) the buffer before freeing it; here the
    buffer is freed when the block is dropped, without the fill.
    """
    name = source.name
    WORK.blocks_set_up += 1
    if typ not in BLOCK_TYPES:
        raise FormatError(f"unknown block type 0x{typ:02x}", name, off + header_off)
    h = header_off
    sz = (data[h + 1] << 16) | (data[h + 2] << 8) | data[h + 3]
    skip = h + 4
    if sz < skip + 2:
        raise FormatError(f"block length {sz} too small", name, off + h)
    if typ == BLOCK_TYPE_LOG:
        data, full = _inflate(source, data, off, skip, sz, guess, limit)
    else:
        if sz > len(data):
            if off + sz > limit:
                raise FormatError(f"block length {sz} runs past the end of the table", name, off)
            data = source.read(off, sz)
        if table_block_size == 0 or sz > table_block_size:
            full = sz
        elif sz < table_block_size and sz < len(data) and data[sz] != 0:
            full = sz           # unpadded: the next block follows directly
        else:
            full = table_block_size
    if not views and type(data) is not bytes:
        data = bytes(data[:sz])
    count = (data[sz - 2] << 8) | data[sz - 1]
    end = sz - 2 - 3 * count
    if count == 0 or end < skip:
        raise FormatError(f"bad restart count {count}", name, off + sz - 2)
    if off + full > limit:
        full = limit - off
    return Block(typ, data, off, h, end, count, full, name)


def _inflate(source, data: Buf, off: int, skip: int, sz: int, guess: int,
             limit: int) -> tuple[bytes, int]:
    want = sz - skip
    WORK.blocks_inflated += 1
    d = zlib.decompressobj()
    chunk = max(guess, sz) + 64
    pos = off + skip
    comp = data[skip:]
    if len(data) < min(chunk, limit - off):
        comp = source.read(pos, min(chunk, limit - pos))
    out = []
    got = 0
    consumed = 0
    try:
        while True:
            piece = d.decompress(comp, want - got + 1)
            out.append(piece)
            got += len(piece)
            if d.eof or got > want:
                consumed += len(comp) - len(d.unused_data)
                break
            if d.unconsumed_tail:
                raise ZlibError("log block inflates to more than its stated length",
                                source.name, off)
            consumed += len(comp)
            pos += len(comp)
            if pos >= limit:
                break
            comp = source.read(pos, min(chunk, limit - pos))
    except zlib.error as e:
        raise ZlibError(f"log block: {e}", source.name, off) from None
    if not d.eof or got != want:
        raise ZlibError(f"log block inflated to {got} bytes, header says {want}",
                        source.name, off)
    return bytes(data[:skip]) + b"".join(out), skip + consumed


def load_block_early_exit(source, off: int, header_off: int, table_block_size: int,
                          limit: int, want_type: int = 0, views: bool = True) -> Block | None:
    """flag block_type_early_exit=on (seed 003, reftable_block_init in reftable/block.c):
    reject an unwanted block after its type byte, before its length is read

        + if (want_type != REFTABLE_BLOCK_TYPE_ANY && block_type != want_type) {
        +  err = 1;
        +  goto done;
        + }
    """
    if off >= limit:
        return None
    guess = table_block_size or DEFAULT_BLOCK_SIZE
    data, typ = _read_header(source, off, header_off, guess, limit)
    if want_type and typ != want_type:
        return None
    return _setup(source, data, typ, off, header_off, table_block_size, guess, limit, views)


def load_block_full_setup(source, off: int, header_off: int, table_block_size: int,
                          limit: int, want_type: int = 0, views: bool = True) -> Block | None:
    """flag block_type_early_exit=off (git at fd888311fbc, before seed 003): set the
    block up fully -- length, re-read of a longer block, inflation of a log block,
    restart table -- and only then reject it in table_init_block

        - if (want_typ != REFTABLE_BLOCK_TYPE_ANY && block->block_type != want_typ) {
        -  err = 1;
        -  goto done;
        - }
    """
    if off >= limit:
        return None
    guess = table_block_size or DEFAULT_BLOCK_SIZE
    data, typ = _read_header(source, off, header_off, guess, limit)
    block = _setup(source, data, typ, off, header_off, table_block_size, guess, limit, views)
    if want_type and block.typ != want_type:
        return None
    return block


def block_loader(flags: Flags) -> BlockLoader:
    """The loader for flags.block_type_early_exit, keeping the source's views under
    flags.mmap (see _setup)."""
    load = load_block_early_exit if flags.block_type_early_exit else load_block_full_setup
    return partial(load, views=flags.mmap)


# -------------------------------------------------------------- seek
def seek_in_block(block: Block, want: bytes, hash_size: int) -> tuple[int, bytes]:
    """Position before the first record with key >= want.

    Binary search for the first restart point whose key is > want (restart
    records store their whole key), then a linear scan from the restart point
    before it. Returns (offset of that record or block.end, key of the record
    before it), ready to start a record loop there.
    """
    data = block.data
    end = block.end
    rs = block.restart_start
    lo, hi = 0, block.restart_count
    try:
        while lo < hi:
            mid = (lo + hi) >> 1
            q = rs + 3 * mid
            r = (data[q] << 16) | (data[q + 1] << 8) | data[q + 2]
            if data[r] != 0 or r >= end:
                raise block.error("restart point is not an uncompressed record", q)
            s = data[r + 1]
            if s < 0x80:
                o = r + 2
            elif data[r + 2] < 0x80:        # two-byte varint, inline
                s = (((s & 0x7F) + 1) << 7) | data[r + 2]
                o = r + 3
            else:
                s, o = get_varint(data, r + 1)
            if bytes(data[o:o + (s >> 3)]) > want:     # (a view has no ordering)
                hi = mid
            else:
                lo = mid + 1
    except IndexError:
        raise block.error("restart table points outside the block", rs) from None
    off = block.restart_offset(lo - 1) if lo > 0 else block.header_off + 4
    # linear scan from that restart point: decode keys, skip values
    last = b""
    typ = block.typ
    start = off
    try:
        while off < end:
            start = off
            p = data[off]
            if p < 0x80:
                off += 1
            else:
                p, off = get_varint(data, off)
            s = data[off]
            if s < 0x80:
                off += 1
            elif data[off + 1] < 0x80:      # two-byte varint, inline
                s = (((s & 0x7F) + 1) << 7) | data[off + 1]
                off += 2
            else:
                s, off = get_varint(data, off)
            nxt = off + (s >> 3)
            if nxt > end or p > len(last):
                raise block.error("record key runs past the block or bad prefix length", start)
            key = last[:p] + data[off:nxt]
            if key >= want:
                return start, last
            off = nxt
            if typ == BLOCK_TYPE_REF:
                while data[off] >= 0x80:        # skip the update index varint
                    off += 1
                off += 1
                vt = s & 7
                if vt == 1:
                    off += hash_size
                elif vt == 2:
                    off += 2 * hash_size
                elif vt == 3:
                    n, off = get_varint(data, off)
                    off += n
                elif vt:
                    raise block.error(f"unknown ref value type {vt}", start)
            elif typ == BLOCK_TYPE_INDEX:
                while data[off] >= 0x80:        # skip the block offset varint
                    off += 1
                off += 1
            else:
                off = skip_value(typ, data, off, s & 7, hash_size)
            if off > end:
                raise block.error("record runs past the block", start)
            last = key
    except (IndexError, FormatError) as e:
        if isinstance(e, FormatError) and e.path is not None:
            raise
        raise block.error("truncated record", start) from None
    return end, last


# -------------------------------------------------------------- loops
def record_loop(typ: int, flags: Flags) -> RecordLoop:
    """The sequential decoder for blocks of type typ under flags (a loops.py function).

    Signature: loop(block, off, last_key, hash_size, min_update_index,
    next_block) -> iterator of records, starting at block offset off (after a
    record whose key is last_key) and continuing with next_block(block) until
    that returns None (next_block None: this block only).
    """
    try:
        return RECORD_LOOPS[(typ, flags.block_key_swap, flags.ref_name_alloc, flags.mmap)]
    except KeyError:
        raise ValueError(f"no record loop for block type {typ!r}") from None


def iter_block(block: Block, hash_size: int, flags: Flags = Flags(),
               min_update_index: int = 0, off: int | None = None,
               last: bytes = b"") -> Iterator:
    """Iterate a block's records from off (default: its first record)."""
    loop = record_loop(block.typ, flags)
    start = block.header_off + 4 if off is None else off
    return loop(block, start, last, hash_size, min_update_index, None)
