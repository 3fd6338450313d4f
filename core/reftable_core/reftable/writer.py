"""TableWriter: write one reftable file, laid out the way git writes it.

Contract: TableWriter(out, options, flags=flags) takes a binary file object or a path; call
add_ref() for refs in strictly increasing refname order, then add_log() for logs
in strictly increasing log-key order (refname, update_index descending), then
close() -> WriterStats. Misuse (out of order, refs after logs, update_index
outside [min_update_index, max_update_index], bad ids) raises APIError; a record
that does not fit an empty block raises EntryTooBigError.
Layout (as git's reftable/writer.c): the header shares the first block; ref
blocks, index and obj blocks are padded to block_size (unless unpadded), the
padding of the block before the log section and before the footer is dropped;
a section with more than 3 blocks (1 when unpadded) gets an index, and index
levels are added until the top level has at most that many blocks; obj blocks
(object id abbreviated to the shortest unique prefix, at least 2 bytes) are
written when index_objects is on and the ref section got an index; log blocks
are zlib-deflated (level 9 like git) and unpadded; footer with CRC-32.
Log messages are normalized like git (trailing newlines stripped, one "\\n"
appended, multi-line rejected) unless exact_log_message.
This module is the only encoder of tables. Its bulk seam: add_refs() and
add_logs() take any iterable of records (a generator over a million is the
fast path; add_ref()/add_log() are the same loop for one record) and, if the
caller has them, the keys' common prefix lengths (trusted), and
TableWriter(..., executor=pool) deflates log blocks in the executor's threads
(zlib releases the GIL) while records are still being packed; the bytes are
the same either way.
write_table(path, refs, logs, options, flags) sorts and writes in one call.
Flags picked here, when the writer is built: writer_scratch (upstream 66ed011bf7: the
buffer each record's key, and each indexed ref's object id, is put into: a new one per
record, or the writer's one scratch buffer) and block_writer_scratch (upstream
d94ac23d3b: the same for the block writers' record keys, one scratch buffer for all the
block writers of the table); both come from a buffers.KeyBuffers, whose counts the
writer adds to counters.WORK when it closes. The bytes written are the same for every
value.
"""
from __future__ import annotations

import os
import zlib
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, BinaryIO

from .basics import MAX_U64, put_varint
from .block_writer import BlockWriter, common_prefix_len, deflate_block
from .buffers import KeyBuffers
from ..counters import WORK
from ..errors import APIError, EntryTooBigError
from ..flags import Flags
from .record import (
    BLOCK_TYPE_INDEX,
    BLOCK_TYPE_LOG,
    BLOCK_TYPE_OBJ,
    BLOCK_TYPE_REF,
    HASH_IDS,
    LOG_DELETION,
    LOG_UPDATE,
    REF_DELETION,
    REF_SYMREF,
    REF_VAL1,
    REF_VAL2,
    LogRecord,
    ObjRecord,
    RefRecord,
    encode_obj_value,
    obj_value_type,
)

if TYPE_CHECKING:            # annotations only: a reader never loads concurrent.futures
    from concurrent.futures import Executor, Future



@dataclass
class WriterOptions:
    block_size: int = 4096
    restart_interval: int = 16
    index_objects: bool = True
    hash_id: str = "sha1"
    min_update_index: int = 0
    max_update_index: int = 0
    unpadded: bool = False
    exact_log_message: bool = False
    compression_level: int = 9


@dataclass
class SectionStats:
    blocks: int = 0
    entries: int = 0
    restarts: int = 0
    offset: int = 0
    index_blocks: int = 0
    index_offset: int = 0
    max_index_level: int = 0


@dataclass
class WriterStats:
    ref: SectionStats = field(default_factory=SectionStats)
    obj: SectionStats = field(default_factory=SectionStats)
    log: SectionStats = field(default_factory=SectionStats)
    index_blocks: int = 0
    blocks: int = 0
    object_id_len: int = 0
    size: int = 0


class TableWriter:
    """Streaming writer for one reftable (see the module contract)."""

    def __init__(self, out: BinaryIO | str | os.PathLike[str],
                 options: WriterOptions | None = None, *,
                 executor: Executor | None = None, flags: Flags = Flags()) -> None:
        o = options or WriterOptions()
        if o.hash_id not in HASH_IDS:
            raise APIError(f"unknown hash id {o.hash_id!r}")
        if not 0 < o.block_size < (1 << 24):
            raise APIError(f"block size {o.block_size} outside 1..16777215")
        if not 1 <= o.restart_interval <= 65535:
            raise APIError(f"restart interval {o.restart_interval} outside 1..65535")
        if not 0 <= o.min_update_index <= o.max_update_index <= MAX_U64:
            raise APIError("need 0 <= min_update_index <= max_update_index < 2**64")
        self.options = o
        if isinstance(out, (str, os.PathLike)):
            self._out: BinaryIO = open(out, "wb")
            self._own = True
        else:
            self._out = out
            self._own = False
        self._write = self._out.write
        fid, self.hash_size = HASH_IDS[o.hash_id]
        self.version = 1 if o.hash_id == "sha1" else 2
        self._header = (b"REFT" + bytes((self.version,)) + o.block_size.to_bytes(3, "big")
                        + o.min_update_index.to_bytes(8, "big")
                        + o.max_update_index.to_bytes(8, "big")
                        + (fid if self.version == 2 else b""))
        self._threshold = 1 if o.unpadded else 3
        self._executor = executor
        # log blocks being deflated by the executor, in file order:
        # (future, entries, restarts, last key)
        self._deflating: deque[tuple[Future[bytes], int, int, bytes]] = deque()
        self._next = 0               # file offset of the current block (padding included)
        self._pending = 0            # padding owed before the next write
        self._index: list[tuple[bytes, int]] = []
        self._last_key = b""
        self._obj: dict[bytes, list[int]] | None = {} if o.index_objects else None
        # the key buffers: the table writer's own (w->buf, writer_scratch) and its block
        # writers' (bw->buf, block_writer_scratch; git's block writer struct is the
        # table writer's block_writer_data, reused for every block)
        self._keys = KeyBuffers(flags.writer_scratch)
        self._block_keys = KeyBuffers(flags.block_writer_scratch)
        self.stats = WriterStats()
        self._section = BLOCK_TYPE_REF     # block type of the section being written
        self._phase = "ref"                # "ref" -> "log" -> "closed"
        self._bw: BlockWriter | None = self._new_block(BLOCK_TYPE_REF)
        self._closed = False
        self._min = o.min_update_index
        self._max = o.max_update_index
        # log encoding caches, kept across add_log()/add_logs() calls: the
        # identity (name, email, time, tz) and message last seen, their encodings
        self._log_ident: tuple = (None, None, -1, -1)
        self._log_ident_enc = b""
        self._log_msg: bytes | None = None
        self._log_tail = b""

    # ------------------------------------------------------------ blocks
    def _new_block(self, typ: int) -> BlockWriter:
        o = self.options
        first = self._next == 0 and not self._deflating
        return BlockWriter(typ, o.block_size, len(self._header) if first else 0,
                           o.restart_interval, self.hash_size, o.compression_level,
                           self._block_keys)

    def _stats_for(self, typ: int) -> SectionStats:
        if typ == BLOCK_TYPE_REF:
            return self.stats.ref
        if typ == BLOCK_TYPE_LOG:
            return self.stats.log
        if typ == BLOCK_TYPE_OBJ:
            return self.stats.obj
        return _IDX_DUMMY

    def _flush(self) -> None:
        """Hand the current block over: written now, or (a log block with an
        executor) deflated there and written in order by _drain()."""
        bw = self._bw
        self._bw = None
        if bw is None or bw.entries == 0:
            return
        if bw.header_off:
            bw.buf[:bw.header_off] = self._header
        if bw.typ == BLOCK_TYPE_LOG and self._executor is not None:
            fut = self._executor.submit(deflate_block, bw.seal(), bw.header_off,
                                        bw.compression_level)
            self._deflating.append((fut, bw.entries, len(bw.restarts), bw.last_key))
            if len(self._deflating) > _MAX_DEFLATING:
                self._drain(_MAX_DEFLATING // 2)
            return
        self._emit(bw.typ, bw.finish(), bw.entries, len(bw.restarts), bw.last_key)

    def _drain(self, keep: int = 0) -> None:
        """Write the deflated log blocks, oldest first, until `keep` are left."""
        q = self._deflating
        while len(q) > keep:
            fut, entries, nrest, last_key = q.popleft()
            self._emit(BLOCK_TYPE_LOG, fut.result(), entries, nrest, last_key)

    def _emit(self, typ: int, data: bytes, entries: int, nrest: int, last_key: bytes) -> None:
        """Write one finished block: padding, stats, its index entry."""
        padding = 0
        if not self.options.unpadded and typ != BLOCK_TYPE_LOG:
            padding = self.options.block_size - len(data)
        st = self._stats_for(typ)
        if typ == BLOCK_TYPE_INDEX:
            self.stats.index_blocks += 1
        else:
            if st.blocks == 0:
                st.offset = self._next
            st.blocks += 1
            st.entries += entries
            st.restarts += nrest
        self.stats.blocks += 1
        if self._pending:
            self._write(bytes(self._pending))
        self._write(data)
        self._pending = padding
        self._index.append((last_key, self._next))
        self._next += len(data) + padding

    def _add(self, key: bytes, extra: int, value: bytes) -> None:
        """Append one record to the section when the current block refused it (or
        there is none): flush, start a block, retry; EntryTooBigError if it does
        not fit an empty block either."""
        if self._bw is not None:
            self._flush()
        bw = self._bw = self._new_block(self._section)
        if not bw.add(key, extra, value):
            raise EntryTooBigError(
                f"record {key[:80]!r} ({len(key) + len(value)} bytes) does not fit "
                f"a block of {self.options.block_size} bytes")

    def _finish_section(self) -> tuple[int, int]:
        """Flush the last block and write the index levels; (index_offset, levels)."""
        typ = self._bw.typ if self._bw is not None else self._section
        self._flush()
        self._drain()
        index_start = 0
        levels = 0
        before = self.stats.index_blocks
        while len(self._index) > self._threshold:
            levels += 1
            index_start = self._next
            idx = self._index
            self._index = []
            self._section = BLOCK_TYPE_INDEX
            for last_key, off in idx:
                value = put_varint(off)
                if self._bw is None or not self._bw.add(last_key, 0, value):
                    self._add(last_key, 0, value)
            self._flush()
        self._section = typ
        self._index = []
        st = self._stats_for(typ)
        st.index_blocks = self.stats.index_blocks - before
        st.index_offset = index_start
        st.max_index_level = levels
        self._last_key = b""
        self._bw = None
        return index_start, levels

    def _finish_ref_section(self) -> None:
        self._finish_section()
        if self._obj is not None and self.stats.ref.index_blocks > 0:
            self._write_objs()
        self._obj = None

    def _write_objs(self) -> None:
        objs = self._obj
        assert objs is not None
        oids = sorted(objs)
        maxc = 1
        for a, b in zip(oids, oids[1:]):
            c = common_prefix_len(a, b)
            maxc = max(maxc, c)
        n = maxc + 1
        self.stats.object_id_len = n
        self._section = BLOCK_TYPE_OBJ
        self._bw = self._new_block(BLOCK_TYPE_OBJ)
        for oid in oids:
            rec = ObjRecord(oid[:n], objs[oid])
            key, vt, val = rec.hash_prefix, obj_value_type(rec), encode_obj_value(rec)
            if self._bw.add(key, vt, val):
                continue
            self._flush()
            self._bw = self._new_block(BLOCK_TYPE_OBJ)
            if self._bw.add(key, vt, val):
                continue
            # too many positions even for an empty block: "scan all refs" form
            if not self._bw.add(key, 0, put_varint(0)):
                raise EntryTooBigError(f"obj key {key.hex()} does not fit a block")
        self._finish_section()

    # ------------------------------------------------------------ records
    # add_refs()/add_logs() are the one loop over records, with everything in
    # local variables; add_ref()/add_log() are that loop for a single record.
    def add_ref(self, rec: RefRecord) -> None:
        """Add one ref; refnames must strictly increase."""
        self.add_refs((rec,))

    def add_refs(self, recs: Iterable[RefRecord],
                 prefixes: Iterable[int] | None = None) -> None:
        """Add refs in strictly increasing refname order. Each record is read when
        it comes and not kept, so a generator may update and yield one object.

        prefixes (optional, trusted): each refname's common prefix length with
        the refname before it (the last one added before this call for the
        first), as BlockWriter.add takes them.

        Flag writer_scratch (upstream 66ed011bf7, writer_add_record and
        reftable_writer_add_ref in reftable/writer.c) is where the two buffers per ref
        come from (take): off, a new one each

            - struct reftable_buf key = REFTABLE_BUF_INIT;
            - err = reftable_record_key(rec, &key);
            - struct reftable_buf buf = REFTABLE_BUF_INIT;
            - err = reftable_buf_add(&buf, (char *)reftable_ref_record_val1(ref), ...

        on, both the writer's one scratch buffer

            + err = reftable_record_key(rec, &w->buf);
            + reftable_buf_reset(&w->buf);
            + err = reftable_buf_add(&w->buf, (char *)reftable_ref_record_val1(ref), ...

        The key's buffer is what the order check compares (last_key is the caller's
        immutable name itself, in both: git copies it); the id's is what
        writer_index_hash looks up, the dict here by the equal bytes of the record's own
        id (a bytearray cannot key a dict), which it keeps as its key (git copies it
        into a new tree node)."""
        if self._phase != "ref":
            raise APIError("refs must be added before logs" if self._phase == "log"
                           else "writer is closed")
        hs = self.hash_size
        lo, hi = self._min, self._max
        objs = self._obj
        last = self._last_key
        ps = iter(prefixes) if prefixes is not None else None
        if self._bw is None:
            self._bw = self._new_block(self._section)
        add = self._bw.add
        take = self._keys.take
        block_off = self._next
        ui_seen = -1
        ui_enc = b""
        try:
            for rec in recs:
                name = rec.refname
                if type(name) is not bytes:
                    name = bytes(name)
                k = take()              # writer_add_record: the record's key
                k[:] = name
                if not k > last:
                    raise APIError(f"ref {name!r} added out of order (after {last!r})")
                ui = rec.update_index
                if ui != ui_seen:
                    if ui < lo or ui > hi:
                        raise APIError(f"update_index {ui} outside [{lo}, {hi}]")
                    ui_seen = ui
                    ui_enc = put_varint(ui - lo)
                vt = rec.value_type
                oid = rec.value         # the object id(s) the ref points at
                peeled = None
                if vt == REF_VAL1:
                    if oid is None or len(oid) != hs:
                        raise APIError(f"ref {name!r}: value must be {hs} bytes")
                    value = ui_enc + oid
                elif vt == REF_VAL2:
                    peeled = rec.target_value
                    if oid is None or len(oid) != hs or peeled is None or len(peeled) != hs:
                        raise APIError(f"ref {name!r}: value and target_value must be "
                                       f"{hs} bytes")
                    value = ui_enc + oid + peeled
                else:
                    oid = None
                    if vt == REF_SYMREF:
                        target = rec.target
                        if not target:
                            raise APIError(f"symref {name!r} without target")
                        value = ui_enc + put_varint(len(target)) + target
                    elif vt == REF_DELETION:
                        value = ui_enc
                    else:
                        raise APIError(f"ref {name!r}: bad value type {vt}")
                if not add(name, vt, value, next(ps) if ps is not None else None):
                    self._add(name, vt, value)
                    add = self._bw.add
                    block_off = self._next
                last = name
                # the ref blocks that refer to each object id, by file offset
                if oid is not None and objs is not None:
                    h = take()          # reftable_writer_add_ref: the object id's buffer
                    while oid is not None:
                        h[:] = oid      # reset, add: the value, then the peeled id, if any
                        lst = objs.get(oid)             # writer_index_hash(w, &buf)
                        if lst is None:
                            objs[oid] = [block_off]
                        elif lst[-1] != block_off:
                            lst.append(block_off)
                        oid, peeled = peeled, None
        finally:
            self._last_key = last

    def add_log(self, rec: LogRecord) -> None:
        """Add one log record; keys (refname, newest first) must strictly increase."""
        self.add_logs((rec,))

    def _start_logs(self) -> None:
        if self._phase == "ref":
            self._finish_ref_section()
            # the log section starts right after the last block: drop its padding
            self._next -= self._pending
            self._pending = 0
            self._section = BLOCK_TYPE_LOG
            self._phase = "log"
        elif self._phase != "log":
            raise APIError("writer is closed")

    def add_logs(self, recs: Iterable[LogRecord],
                 prefixes: Iterable[int] | None = None) -> None:
        """Add logs in strictly increasing key order (refname, newest first); each
        record is read when it comes and not kept (as for add_refs()).

        prefixes (optional, trusted): each log key's common prefix length with
        the key before it, as for add_refs(). Each key goes into a buffer from the
        writer's KeyBuffers for the order check, as a ref's does (writer_scratch)."""
        if self._phase != "log":
            self._start_logs()
        ps = iter(prefixes) if prefixes is not None else None
        if self._bw is None:
            self._bw = self._new_block(self._section)
        add = self._bw.add
        take = self._keys.take
        hs = self.hash_size
        zero = bytes(hs)
        exact = self.options.exact_log_message
        last = self._last_key
        ui_seen = -1
        suffix = b""
        # a bulk import usually repeats one identity, time and message: their
        # encodings are reused while equal ones come in
        id_name, id_email, id_time, id_tz = self._log_ident
        ident_enc = self._log_ident_enc
        msg_in = self._log_msg
        tail = self._log_tail
        try:
            for rec in recs:
                ui = rec.update_index
                # like git's writer, no [min, max] check for logs: a reflog deletion
                # carries the update index of the entry it deletes
                if ui != ui_seen:
                    if not 0 <= ui <= MAX_U64:
                        raise APIError(f"log update_index {ui} out of range")
                    ui_seen = ui
                    suffix = b"\0" + (MAX_U64 - ui).to_bytes(8, "big")
                name = rec.refname
                if type(name) is not bytes:
                    name = bytes(name)
                if not name or b"\0" in name:
                    raise APIError(f"bad log refname {name!r}")
                key = name + suffix
                k = take()              # writer_add_record: the record's key
                k[:] = key
                if not k > last:
                    raise APIError(f"log {name!r}@{ui} added out of order")
                vt = rec.value_type
                if vt == LOG_UPDATE:
                    old = rec.old_id
                    new = rec.new_id
                    if old is None:
                        old = zero
                    if new is None:
                        new = zero
                    if len(old) != hs or len(new) != hs:
                        raise APIError(f"log ids must be {hs} bytes")
                    nm, em, tm, tz = rec.name, rec.email, rec.time, rec.tz_offset
                    if nm != id_name or em != id_email or tm != id_time or tz != id_tz:
                        ident_enc = _ident_bytes(nm, em, tm, tz)
                        id_name, id_email, id_time, id_tz = nm, em, tm, tz
                        msg_in = None
                    msg = rec.message
                    if msg != msg_in:
                        raw = msg
                        if not exact:
                            msg = msg.rstrip(b"\n")
                            if b"\n" in msg:
                                raise APIError(f"log {name!r}@{ui}: multi-line message")
                            msg += b"\n"
                        tail = ident_enc + put_varint(len(msg)) + msg
                        msg_in = raw
                    value = old + new + tail
                elif vt == LOG_DELETION:
                    value = b""
                else:
                    raise APIError(f"log {name!r}: bad value type {vt}")
                if not add(key, vt, value, next(ps) if ps is not None else None):
                    self._add(key, vt, value)
                    add = self._bw.add
                last = key
        finally:
            self._last_key = last
            self._log_ident = (id_name, id_email, id_time, id_tz)
            self._log_ident_enc = ident_enc
            self._log_msg = msg_in
            self._log_tail = tail

    # ------------------------------------------------------------ close
    def close(self) -> WriterStats:
        if self._closed:
            return self.stats
        try:
            if self._phase == "ref":
                self._finish_ref_section()
            elif self._phase == "log":
                self._finish_section()
            self._phase = "closed"
            self._pending = 0
            if self._next == 0:
                self._write(self._header)
                self._next = len(self._header)
            st = self.stats
            footer = (self._header + st.ref.index_offset.to_bytes(8, "big")
                      + ((st.obj.offset << 5) | st.object_id_len).to_bytes(8, "big")
                      + st.obj.index_offset.to_bytes(8, "big")
                      + st.log.offset.to_bytes(8, "big")
                      + st.log.index_offset.to_bytes(8, "big"))
            footer += zlib.crc32(footer).to_bytes(4, "big")
            self._write(footer)
            st.size = self._next + len(footer)
            if hasattr(self._out, "flush"):
                self._out.flush()
        finally:
            self._closed = True
            if self._own:
                self._out.close()
            self._count_buffers()
        return self.stats

    def _count_buffers(self) -> None:
        """The key buffers this writer and its block writers took, into counters.WORK:
        built (a new one each: the flag off) or reused (the scratch buffer: on)."""
        w = WORK
        n = self._keys.taken()
        if self._keys.scratch:
            w.writer_buffers_reused += n
        else:
            w.writer_buffers_built += n
        n = self._block_keys.taken()
        if self._block_keys.scratch:
            w.block_writer_buffers_reused += n
        else:
            w.block_writer_buffers_built += n

    def __enter__(self) -> TableWriter:
        return self

    def __exit__(self, exc_type, *rest: object) -> None:
        if exc_type is None:
            self.close()
        elif self._own:
            self._out.close()


_MAX_DEFLATING = 16     # log blocks queued at the executor before the oldest are written

_IDX_DUMMY = SectionStats()


def _ident_bytes(name: bytes, email: bytes, time: int, tz: int) -> bytes:
    if not -32768 <= tz <= 32767:
        raise APIError(f"tz_offset out of range: {tz}")
    return b"".join((put_varint(len(name)), name, put_varint(len(email)), email,
                     put_varint(time),
                     (tz & 0xFFFF).to_bytes(2, "big")))


def write_table(path: str | os.PathLike[str] | BinaryIO, refs: Iterable[RefRecord] = (),
                logs: Iterable[LogRecord] = (),
                options: WriterOptions | None = None, flags: Flags = Flags()) -> WriterStats:
    """Sort refs and logs, fill in update-index limits when options is None, write."""
    refs = sorted(refs, key=lambda r: r.refname)
    logs = sorted(logs, key=lambda r: (r.refname, -r.update_index))
    if options is None:
        uis = [r.update_index for r in refs] + [r.update_index for r in logs]
        options = WriterOptions(min_update_index=min(uis, default=0),
                                max_update_index=max(uis, default=0))
    w = TableWriter(path, options, flags=flags)
    try:
        for r in refs:
            w.add_ref(r)
        for lg in logs:
            w.add_log(lg)
    except BaseException:
        if w._own:
            w._out.close()
        raise
    return w.close()
