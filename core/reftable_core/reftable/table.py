"""A single reftable file: TableReader and its RecordIterator.

Contract: TableReader(source, flags=Flags(), name=None) validates the header
(magic "REFT", version 1 = SHA-1 / 24 bytes, version 2 = 28 bytes with hash id
"sha1" or "s256") and the footer (68/72 bytes, CRC-32), then serves
the interface it shares with a merged table (iter.Reftable):
  refs() / logs() -> RecordIterator (an iter.RecordIter: key order; .seek(key)
      positions at the first record with key >= key; iteration runs to the end
      of the section), iter_refs(prefix), iter_logs(name) (also as logs_for);
and of its own:
  seek_ref(name) -> RefRecord | None (exact, through the ref index if present),
  refs_for(oid) -> iterator of RefRecord whose value or peeled value is oid
      (through the obj blocks when present, else a full scan, like git),
  blocks() -> every Block of the file in order (for dump), and close().
Attributes: name, hash_id ('sha1'|'sha256'), hash_size, version, block_size,
min_update_index, max_update_index and the footer's section offsets.
Seeks use the (multi-level) index when the section has one, else a linear scan
over blocks. Flags picked here: block_type_early_exit (block loader),
block_key_swap / ref_name_alloc / decode_key_in_place (record loops),
next_block_in_place (one record loop through a section, or a new one per block),
seek_in_place (the seek within a block: block.seek_in_block or
seek_in_block_copying) and restart_key_in_place (that seek's binary search over
the restart points: block.restart_scan). Corrupt input raises
FormatError naming the table and the absolute offset.
"""
from __future__ import annotations

import os
import zlib
from collections.abc import Callable, Iterator
from itertools import chain

from .basics import get_be24, get_be32, get_be64
from .block import (block_loader, record_loop, restart_scan, seek_in_block,
                    seek_in_block_copying)
from .blocksource import BlockSource, open_file_source
from ..counters import WORK
from ..errors import FormatError, ReftableError
from ..flags import Flags
from .iter import RecordIter, Reftable
from .loops import finish_loop
from .parsed_block import Block
from .record import (
    BLOCK_TYPE_INDEX,
    BLOCK_TYPE_LOG,
    BLOCK_TYPE_OBJ,
    BLOCK_TYPE_REF,
    FORMAT_IDS,
    HASH_IDS,
    LogRecord,
    RefRecord,
    decode_index,
)

MAGIC = b"REFT"
HEADER_SIZE = {1: 24, 2: 28}
FOOTER_SIZE = {1: 68, 2: 72}


class RecordIterator(RecordIter):
    """Iterator over one section's records with seek(key) (an iter.RecordIter).

    seek() does the lookup work at once (errors surface there); iteration then
    decodes block after block lazily. iter(it) hands out the underlying
    generator, so `for rec in it` runs without a Python-level __next__.
    """

    __slots__ = ("_gen", "_reader", "_typ")

    def __init__(self, reader: TableReader, typ: int) -> None:
        self._reader = reader
        self._typ = typ
        self._gen: Iterator | None = None     # positioned lazily: seek() or section start

    def seek(self, key: bytes) -> RecordIterator:
        if self._gen is not None:
            self._drop_loop()
        self._gen = self._reader._seek(self._typ, key if type(key) is bytes else bytes(key))
        return self

    def _from_start(self) -> Iterator:
        self._gen = self._reader._section_records(self._typ)
        return self._gen

    def __iter__(self) -> Iterator:
        gen = self._gen
        return gen if gen is not None else self._from_start()

    def __next__(self):
        gen = self._gen
        if gen is None:
            gen = self._from_start()
        return next(gen)

    def close(self) -> None:
        self._drop_loop()

    def _drop_loop(self) -> None:
        """Drop the record loop of the last seek, through loops.finish_loop (see
        merged.MergedIter._drop_loop)."""
        gen = self._gen
        self._gen = None
        finish_loop(gen)

    def __dealloc__(self) -> None:
        """The Cython build's last call, as merged.MergedIter.__dealloc__."""
        self._drop_loop()


class TableReader(Reftable):
    """Read-only access to one reftable (see the module contract)."""

    def __init__(self, source: BlockSource, flags: Flags = Flags(),
                 name: str | None = None) -> None:
        self.source = source
        self.flags = flags
        self.path = source.name
        self.name = name if name is not None else os.path.basename(source.name)
        self._load = block_loader(flags)
        self._records_from = (self._records_in_place if flags.next_block_in_place
                              else self._records_block_by_block)
        self._seek_in_block = seek_in_block if flags.seek_in_place else seek_in_block_copying
        self._restart_scan = restart_scan(flags)
        self._loops = {t: record_loop(t, flags)
                       for t in (BLOCK_TYPE_REF, BLOCK_TYPE_LOG, BLOCK_TYPE_OBJ, BLOCK_TYPE_INDEX)}
        try:
            self._parse()
        except ReftableError:
            raise
        except (IndexError, ValueError, KeyError) as e:     # defensive
            raise FormatError(f"corrupt table: {e}", self.path, 0) from None
        # each section's next_block, made once (a seek hands its type's to the loop)
        self._next_blocks = {t: self._next_block_of(t) for t in self._loops}

    @classmethod
    def open(cls, path: str | os.PathLike[str], flags: Flags = Flags(),
             name: str | None = None) -> TableReader:
        src = open_file_source(path, flags)
        try:
            return cls(src, flags, name)
        except BaseException:
            src.close()
            raise

    # ------------------------------------------------------------ parsing
    def _parse(self) -> None:
        src = self.source
        size = src.size()
        self.file_size = size
        head = bytes(src.read(0, 28))
        if len(head) < 24:
            raise FormatError("file too small for a reftable header", self.path, 0)
        if head[:4] != MAGIC:
            raise FormatError("bad magic (not a reftable)", self.path, 0)
        version = head[4]
        if version not in HEADER_SIZE:
            raise FormatError(f"unsupported reftable version {version}", self.path, 4)
        self.version = version
        hsize = HEADER_SIZE[version]
        fsize = FOOTER_SIZE[version]
        self.header_size = hsize
        if size < hsize + fsize:
            raise FormatError(f"file of {size} bytes too small for header and footer",
                              self.path, 0)
        self.block_size = get_be24(head, 5)[0]
        self.min_update_index = get_be64(head, 8)[0]
        self.max_update_index = get_be64(head, 16)[0]
        if version == 1:
            self.hash_id = "sha1"
        else:
            fid = head[24:28]
            if fid not in FORMAT_IDS:
                raise FormatError(f"unknown hash id {fid!r}", self.path, 24)
            self.hash_id = FORMAT_IDS[fid]
        self.hash_size = HASH_IDS[self.hash_id][1]
        foot_off = size - fsize
        footer = bytes(src.read(foot_off, fsize))
        if len(footer) != fsize:
            raise FormatError("truncated footer", self.path, foot_off)
        if footer[:hsize] != head[:hsize]:
            raise FormatError("footer does not repeat the header", self.path, foot_off)
        crc = get_be32(footer, fsize - 4)[0]
        if zlib.crc32(footer[:fsize - 4]) != crc:
            raise FormatError("footer CRC-32 mismatch", self.path, foot_off + fsize - 4)
        p = hsize
        self.ref_index_offset = get_be64(footer, p)[0]
        objv = get_be64(footer, p + 8)[0]
        self.obj_offset = objv >> 5
        self.obj_id_len = objv & 0x1F
        self.obj_index_offset = get_be64(footer, p + 16)[0]
        self.log_offset = get_be64(footer, p + 24)[0]
        self.log_index_offset = get_be64(footer, p + 32)[0]
        self._limit = foot_off      # blocks live in [0, _limit)
        first_type = bytes(src.read(hsize, 1))[:1] if foot_off > hsize else b""
        self.first_block_type = first_type[0] if first_type else 0
        self.has_refs = self.first_block_type == BLOCK_TYPE_REF
        self.has_logs = self.first_block_type == BLOCK_TYPE_LOG or self.log_offset > 0
        self.has_objs = self.obj_offset > 0
        if self.has_objs and not self.obj_id_len:
            raise FormatError("obj section present but obj_id_len is 0", self.path,
                              foot_off + hsize + 8)
        for what, off in (("ref index", self.ref_index_offset), ("obj", self.obj_offset),
                          ("obj index", self.obj_index_offset), ("log", self.log_offset),
                          ("log index", self.log_index_offset)):
            if off >= foot_off and off != 0:
                raise FormatError(f"{what} offset {off} beyond the last block", self.path,
                                  foot_off)

    # ------------------------------------------------------------ blocks
    def load_block(self, off: int, want_type: int = 0) -> Block | None:
        """The block at off (None past the end or if of another type than want_type)."""
        return self._load(self.source, off, self.header_size if off == 0 else 0,
                          self.block_size, self._limit, want_type)

    def _section_start(self, typ: int) -> int | None:
        if typ == BLOCK_TYPE_REF:
            return 0 if self.has_refs else None
        if typ == BLOCK_TYPE_LOG:
            return self.log_offset if self.has_logs else None
        if typ == BLOCK_TYPE_OBJ:
            return self.obj_offset if self.has_objs else None
        raise ValueError(f"no section of block type {typ}")

    def _index_offset(self, typ: int) -> int:
        return {BLOCK_TYPE_REF: self.ref_index_offset, BLOCK_TYPE_LOG: self.log_index_offset,
                BLOCK_TYPE_OBJ: self.obj_index_offset}[typ]

    def _next_block_of(self, typ: int) -> Callable[[Block], Block | None]:
        """next_block(b): the block after b if it is of type typ, else None."""
        load = self._load
        src = self.source
        bsize = self.block_size
        limit = self._limit

        def next_block(b: Block) -> Block | None:
            return load(src, b.off + b.full_size, 0, bsize, limit, typ)
        return next_block

    def _records_in_place(self, block: Block | None, off: int, last: bytes) -> Iterator:
        """Records from block/off onwards, continuing through following blocks of its type.

        Flag next_block_in_place=on (upstream b00bcb7c49, table_iter_next_block in
        reftable/reader.c): one record loop runs through the section, stepping into
        the next block itself

            +	err = reader_init_block_reader(ti->r, &ti->br, next_block_off, ti->typ);
            +	block_iter_seek_start(&ti->bi, &ti->br);
        """
        if block is None:
            return iter(())
        WORK.block_iters_built += 1
        typ = block.typ
        return self._loops[typ](block, off, last, self.hash_size, self.min_update_index,
                                self._next_blocks[typ])

    def _records_block_by_block(self, block: Block | None, off: int,
                                last: bytes) -> Iterator:
        """The same records, flag next_block_in_place=off (git before b00bcb7c49): at the
        end of each block the table iterator builds a new one on the next block, a new
        block iterator with it, and drops the old one

            -	struct table_iter next = TABLE_ITER_INIT;
            -	err = table_iter_next_block(&next, ti);
            -	table_iter_close(ti);
            -	*ti = next;

        here a new record loop per block (its generator, frame and last-key buffer),
        the loops chained by itertools.chain: the one C call per record it adds is the
        model's table_iter_next -> block_iter_next, which git makes in both versions.
        """
        if block is None:
            return iter(())
        return chain.from_iterable(self._block_loops(block, off, last))

    def _block_loops(self, block: Block, off: int, last: bytes) -> Iterator[Iterator]:
        loop = self._loops[block.typ]
        next_block = self._next_blocks[block.typ]
        hs = self.hash_size
        min_ui = self.min_update_index
        following: Block | None = block
        while following is not None:
            WORK.block_iters_built += 1
            yield loop(following, off, last, hs, min_ui, None)
            following = next_block(following)
            if following is not None:
                off = following.header_off + 4
                last = b""

    def _section_records(self, typ: int) -> Iterator:
        start = self._section_start(typ)
        if start is None:
            return iter(())
        block = self.load_block(start, typ)
        if block is None:
            return iter(())
        return self._records_from(block, block.header_off + 4, b"")

    def _seek_linear(self, start: int, key: bytes, typ: int) -> Block | None:
        block = self.load_block(start, typ)
        if block is None:
            return None
        while True:
            nxt = self.load_block(block.off + block.full_size, typ)
            if nxt is None or nxt.first_key() > key:
                return block
            block = nxt

    def _seek_indexed(self, index_off: int, key: bytes, typ: int) -> Block | None:
        """Walk the index levels down to the block of type typ that may hold key."""
        block = self._seek_linear(index_off, key, BLOCK_TYPE_INDEX)
        if block is None:
            raise FormatError("index offset does not point at an index block", self.path,
                              index_off)
        hs = self.hash_size
        while True:
            off, last = self._seek_in_block(block, key, hs, self._restart_scan)
            if off >= block.end:
                # beyond this block's last key: on to the next index block, if any
                block = self.load_block(block.off + block.full_size, BLOCK_TYPE_INDEX)
                if block is None:
                    return None         # key is beyond the last indexed key
                continue
            try:
                rec, _, _ = decode_index(block.data, block.base + off, last)
            except FormatError as e:
                raise FormatError(e.msg, self.path, block.off + off) from None
            child = self.load_block(rec.offset)
            if child is None:
                raise FormatError(f"index points past the end ({rec.offset})", self.path,
                                  block.off + off)
            if child.off >= block.off:
                raise FormatError(f"index record points forward to {rec.offset}", self.path,
                                  block.off + off)
            if child.typ == typ:
                return child
            if child.typ != BLOCK_TYPE_INDEX:
                raise FormatError(f"index points at a block of type {chr(child.typ)!r}",
                                  self.path, child.off)
            block = child

    def _find_block(self, typ: int, key: bytes) -> Block | None:
        start = self._section_start(typ)
        if start is None:
            return None
        idx = self._index_offset(typ)
        if idx:
            return self._seek_indexed(idx, key, typ)
        return self._seek_linear(start, key, typ)

    def _seek(self, typ: int, key: bytes) -> Iterator:
        block = self._find_block(typ, key)
        if block is None:
            return iter(())
        off, last = self._seek_in_block(block, key, self.hash_size,
                                         self._restart_scan)
        return self._records_from(block, off, last)

    # ------------------------------------------------------------ public API
    def refs(self) -> RecordIterator:
        return RecordIterator(self, BLOCK_TYPE_REF)

    def logs(self) -> RecordIterator:
        return RecordIterator(self, BLOCK_TYPE_LOG)

    def objs(self) -> RecordIterator:
        return RecordIterator(self, BLOCK_TYPE_OBJ)

    def seek_ref(self, name: bytes) -> RefRecord | None:
        """The record named name (deletions included), or None."""
        name = bytes(name)
        block = self._find_block(BLOCK_TYPE_REF, name)
        if block is None:
            return None
        off, last = self._seek_in_block(block, name, self.hash_size,
                                         self._restart_scan)
        if off >= block.end:
            return None     # every key of the block that may hold name is smaller
        rec = next(self._loops[BLOCK_TYPE_REF](block, off, last, self.hash_size,
                                               self.min_update_index, None))
        return rec if rec.refname == name else None

    def logs_for(self, refname: bytes) -> Iterator[LogRecord]:
        """Log records of one ref, newest first (iter_logs)."""
        return self.iter_logs(bytes(refname))

    def refs_for(self, oid: bytes) -> Iterator[RefRecord]:
        oid = bytes(oid)
        if not self.has_objs:
            return self._scan_for(oid)
        prefix = oid[:self.obj_id_len]
        rec = next(self._seek(BLOCK_TYPE_OBJ, prefix), None)
        if rec is None or rec.hash_prefix != prefix:
            return iter(())
        if not rec.offsets:
            return self._scan_for(oid)
        return self._refs_in_blocks(oid, rec.offsets)

    def _scan_for(self, oid: bytes) -> Iterator[RefRecord]:
        for r in self.refs():
            if r.value == oid or r.target_value == oid:
                yield r

    def _refs_in_blocks(self, oid: bytes, offsets: list[int]) -> Iterator[RefRecord]:
        loop = self._loops[BLOCK_TYPE_REF]
        for off in offsets:
            block = self.load_block(off, BLOCK_TYPE_REF)
            if block is None:
                raise FormatError(f"obj record points at {off}, not a ref block", self.path,
                                  off)
            for r in loop(block, block.header_off + 4, b"", self.hash_size,
                          self.min_update_index, None):
                if r.value == oid or r.target_value == oid:
                    yield r

    def blocks(self) -> Iterator[Block]:
        """Every block of the file in order (ref, index, obj, log...)."""
        off = 0
        while off < self._limit:
            block = self.load_block(off)
            if block is None:
                return
            yield block
            off = block.off + block.full_size

    def close(self) -> None:
        self.source.close()

    def __enter__(self) -> TableReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"TableReader({self.path!r}, {self.hash_id}, block_size={self.block_size}, "
                f"update_index={self.min_update_index}..{self.max_update_index})")


def open_table(path: str | os.PathLike[str], flags: Flags = Flags()) -> TableReader:
    return TableReader.open(path, flags)
