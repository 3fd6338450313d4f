"""Reftable blocks: the block reader / record iterators.

Contract.
Reader: a BlockLoader (chosen from flags.block_type_early_exit and flags.mmap)
turns (source, offset) into a parsed Block (parsed_block.py) -- header, inflated
log data, restart table -- or None when past the end / of an unwanted type.
seek_in_block() binary-searches the restart points and scans linearly
(seek_in_block_copying: the same, flag seek_in_place=off), with the binary search
restart_scan(flags) picks (flag restart_key_in_place: loops.py's restart_scan_start or
restart_scan_start_decoding) and loops.py's record_extent (generated, as the record
loops are, from record.py's layout statements: no function here reads a record's
bytes itself); record_loop(typ, flags)
returns the generator function that decodes a block's records sequentially
(loops.py's variant for flags.block_key_swap, flags.ref_name_alloc and
flags.decode_key_in_place).
All offsets in a Block are relative to the block start (which, for the block
at file offset 0, includes the file header); byte rel of the block is
data[base + rel]. Under mmap=on (views) a block of an in-place source uses its
bytes where they are, with no copy per block: data is MmapSource's whole map
(an mmap.mmap: indexing gives ints, slicing fresh bytes, so each field the record
loops slice out is its one copy) and base the block's file offset; under
mmap=off data is the block's own fresh bytes (PreadSource's read) and base 0.
Log blocks are always inflated into fresh bytes (base 0), as git inflates into
a buffer of its own. Errors are FormatError with the table name and the
absolute file offset.
"""
from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator
from functools import partial

from .basics import Buf
from ..counters import WORK
from ..cython_shim import cython     # the Cython build compiles this as `import cython`
from ..errors import FormatError, ZlibError
from ..flags import Flags
from .loops import RECORD_LOOPS, RESTART_SCANS, RecordLoop, record_extent, restart_scan_start
from .parsed_block import Block
from .record import BLOCK_TYPE_LOG, BLOCK_TYPES

DEFAULT_BLOCK_SIZE = 4096


# ============================================================== reader
BlockLoader = Callable[..., "Block | None"]


def _read_header(source, off: int, header_off: int, guess: int,
                 limit: int, views: bool) -> tuple[Buf, int, int, int]:
    """(data, base, have, block type): under views the source's bytes in place if it
    has them (no copy), else a read of up to guess bytes (a fresh bytes, base 0);
    have = how many bytes of data from base on belong to the table."""
    WORK.blocks_read += 1
    where = source.in_place(off) if views else None
    if where is None:
        data = source.read(off, min(guess, limit - off))
        base = 0
        have = len(data)
    else:
        data, base = where
        have = limit - off
    if have < header_off + 4:
        raise FormatError("truncated block header", source.name, off)
    return data, base, have, data[base + header_off]


def _setup(block: Block, source, have: int, table_block_size: int, limit: int) -> Block:
    """Everything after the type byte: length, re-read, inflate, restart table, given
    to block (its data and base replaced by a re-read's or the inflated bytes).

    Flag mmap (seed 004 4/4, file_read_block in reftable/blocksource.c) acts in
    _read_header, through the source: on, the block uses the map in place

        + dest->data = b->data + off;

    (data is the map, base the block's offset in it; nothing is copied per block);
    off, each block is a fresh buffer filled by pread

        - dest->data = reftable_malloc(size);
        - if (pread_in_full(b->fd, dest->data, size, off) != size)

    (PreadSource's fresh bytes, re-read whole when the block is longer than the
    first read). git's mmap=off file_return_block also memset(0xff) the buffer
    before freeing it; here the buffer is freed when the block is dropped, without
    the fill.
    """
    name = block.name
    data = block.data
    base = block.base
    typ = block.typ
    off = block.off
    header_off = block.header_off
    WORK.blocks_set_up += 1
    if typ not in BLOCK_TYPES:
        raise FormatError(f"unknown block type 0x{typ:02x}", name, off + header_off)
    h = base + header_off
    sz = (data[h + 1] << 16) | (data[h + 2] << 8) | data[h + 3]
    skip = header_off + 4
    if sz < skip + 2:
        raise FormatError(f"block length {sz} too small", name, off + header_off)
    if typ == BLOCK_TYPE_LOG:
        data, full = _inflate(source, block, have, sz, table_block_size or DEFAULT_BLOCK_SIZE,
                              limit)
        base = 0
    else:
        if sz > have:
            if off + sz > limit:
                raise FormatError(f"block length {sz} runs past the end of the table", name, off)
            data = source.read(off, sz)
            base = 0
            have = sz
        if table_block_size == 0 or sz > table_block_size:
            full = sz
        elif sz < table_block_size and sz < have and data[base + sz] != 0:
            full = sz           # unpadded: the next block follows directly
        else:
            full = table_block_size
    e = base + sz
    count = (data[e - 2] << 8) | data[e - 1]
    end = sz - 2 - 3 * count
    if count == 0 or end < skip:
        raise FormatError(f"bad restart count {count}", name, off + sz - 2)
    if off + full > limit:
        full = limit - off
    block.data, block.base, block.full_size = data, base, full
    block.end = block.restart_start = end
    block.restart_count = count
    return block


def _inflate(source, block: Block, have: int, sz: int, guess: int,
             limit: int) -> tuple[bytes, int]:
    """The log block inflated into fresh bytes (its header, then the records) and the
    bytes it takes in the file; compressed input is read in chunks from pos on."""
    data = block.data
    base = block.base
    off = block.off
    skip = block.header_off + 4
    want = sz - skip
    WORK.blocks_inflated += 1
    d = zlib.decompressobj()
    chunk = max(guess, sz) + 64
    pos = off + skip
    comp = data[base + skip:base + min(have, chunk)]
    if have < min(chunk, limit - off):
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
    head = data[base:base + skip]      # data is bytes or a map here: a slice is bytes
    return head + b"".join(out), skip + consumed    # type: ignore[operator, return-value]


@cython.locals(header_off="Py_ssize_t", table_block_size="Py_ssize_t", limit="Py_ssize_t",
               want_type="Py_ssize_t", guess="Py_ssize_t", base="Py_ssize_t", have="Py_ssize_t",
               typ="Py_ssize_t")
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
    data, base, have, typ = _read_header(source, off, header_off, guess, limit, views)
    if want_type and typ != want_type:
        return None
    return _setup(Block(typ, data, off, header_off, source.name, base), source, have,
                  table_block_size, limit)


@cython.locals(header_off="Py_ssize_t", table_block_size="Py_ssize_t", limit="Py_ssize_t",
               want_type="Py_ssize_t", guess="Py_ssize_t", base="Py_ssize_t", have="Py_ssize_t",
               typ="Py_ssize_t", block="Block")
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
    data, base, have, typ = _read_header(source, off, header_off, guess, limit, views)
    block = _setup(Block(typ, data, off, header_off, source.name, base), source, have,
                   table_block_size, limit)
    if want_type and block.typ != want_type:
        return None
    return block


def block_loader(flags: Flags) -> BlockLoader:
    """The loader for flags.block_type_early_exit; under flags.mmap it uses an
    in-place source's bytes where they are (see _setup)."""
    load = load_block_early_exit if flags.block_type_early_exit else load_block_full_setup
    return partial(load, views=flags.mmap)


# -------------------------------------------------------------- seek
RestartScan = Callable[[Block, bytes], int]


def restart_scan(flags: Flags) -> RestartScan:
    """The binary search over a block's restart points for flags.restart_key_in_place
    (upstream d51d8cc368, restart_needle_less in reftable/block.c): on, each probed
    restart key is compared where it lies (its prefix length checked to be 0); off, it is
    decoded into a new buffer first (reftable_decode_key into an empty strbuf). A table
    reader picks it once and hands it to every seek_in_block / seek_in_block_copying."""
    return RESTART_SCANS[flags.restart_key_in_place]


def _truncated(block: Block, e: Exception, start: int) -> FormatError:
    """A scan's error: a FormatError that names its table as it is, else "truncated"."""
    if isinstance(e, FormatError) and e.path is not None:
        return e
    return block.error("truncated record", start - block.base)


def seek_in_block(block: Block, want: bytes, hash_size: int,
                  scan: RestartScan = restart_scan_start) -> tuple[int, bytes]:
    """Position before the first record with key >= want.

    Binary search over the restart points (scan: restart_scan(flags)), then a linear
    scan from the restart point before the first one greater than want: keys decoded,
    values skipped.
    Returns (offset of that record or block.end, key of the record before it),
    ready to start a record loop there.

    Flag seek_in_place=on (upstream 9da5c992dd, block_iter_seek_key in
    reftable/block.c): the scan has one state, the record's offset and the last
    key; it remembers the offset and returns it once a key is >= want

        +		size_t prev_off = it->next_off;
        +		err = block_iter_next(it, &rec);
        +			it->next_off = prev_off;
    """
    data = block.data
    base = block.base
    end = base + block.end
    off = start = scan(block, want)
    last = b""
    try:
        while off < end:
            start = off
            p, lo, hi, off = record_extent(block, data, off, end, len(last), hash_size)
            key = last[:p] + data[lo:hi]
            if key >= want:
                return start - base, last
            last = key
    except (IndexError, FormatError) as e:
        raise _truncated(block, e, start) from None
    return block.end, last


def seek_in_block_copying(block: Block, want: bytes, hash_size: int,
                          scan: RestartScan = restart_scan_start) -> tuple[int, bytes]:
    """seek_in_block, flag seek_in_place=off (git before 9da5c992dd): the scan steps a
    copy of the iterator and copies it back after each record below want

        -	struct block_iter next = BLOCK_ITER_INIT;
        -		block_iter_copy_from(&next, it);
        -		err = block_iter_next(&next, &rec);
        -		block_iter_copy_from(it, &next);

    block_iter_copy_from copies the offset and the last key (strbuf_reset +
    strbuf_addbuf): here the two states' keys are bytearrays, each copy a slice
    assignment (counted in WORK.seek_iter_copies); the keys are decoded as
    seek_in_block decodes them.
    """
    data = block.data
    base = block.base
    end = base + block.end
    off = start = scan(block, want)
    it_last = bytearray()           # it->last_key
    next_last = bytearray()         # next.last_key
    try:
        while off < end:
            start = off
            next_last[:] = it_last      # block_iter_copy_from(&next, it)
            WORK.seek_iter_copies += 1
            p, lo, hi, off = record_extent(block, data, off, end, len(next_last), hash_size)
            next_last = next_last[:p] + data[lo:hi]
            if next_last >= want:
                return start - base, bytes(it_last)
            it_last[:] = next_last      # block_iter_copy_from(it, &next)
            WORK.seek_iter_copies += 1
    except (IndexError, FormatError) as e:
        raise _truncated(block, e, start) from None
    return block.end, bytes(it_last)


# -------------------------------------------------------------- loops
def record_loop(typ: int, flags: Flags) -> RecordLoop:
    """The sequential decoder for blocks of type typ under flags (a loops.py function).

    Signature: loop(block, off, last_key, hash_size, min_update_index,
    next_block) -> iterator of records, starting at block offset off (after a
    record whose key is last_key) and continuing with next_block(block) until
    that returns None (next_block None: this block only).
    """
    try:
        return RECORD_LOOPS[(typ, flags.block_key_swap, flags.ref_name_alloc, flags.mmap,
                             flags.decode_key_in_place)]
    except KeyError:
        raise ValueError(f"no record loop for block type {typ!r}") from None


def iter_block(block: Block, hash_size: int, flags: Flags = Flags(),
               min_update_index: int = 0, off: int | None = None,
               last: bytes = b"") -> Iterator:
    """Iterate a block's records from off (default: its first record)."""
    loop = record_loop(block.typ, flags)
    start = block.header_off + 4 if off is None else off
    return loop(block, start, last, hash_size, min_update_index, None)
