"""Bulk fast path for reftable_core.reftable.writer.TableWriter (dataset generation only).

Contract: `write_bulk_table(path, options, names, values, peeled, ...)` writes
exactly the bytes that TableWriter writes for the same records through its
public add_ref()/add_log() calls (tests/test_data_gen.py compares them), in a
fraction of the time: the records of a sorted bulk run are encoded straight
into the TableWriter's current BlockWriter (same fit rule, same restart rule),
and TableWriter itself still does everything else (file header, padding,
index levels, obj section, log deflating, footer). It touches TableWriter's
internals (_bw, _new_block, _flush, _next, _obj, _last_key): if those change,
the byte-identity test fails and `fast=False` (the public API) still works.

The base table of a dataset is `HEAD` (a symref) followed by the refs in name
order, optionally followed by one log record per ref (all with the same
update index, old id, identity, time and message; only the new id differs).

Speed: prefix lengths come from numpy when it is there; records are built per
window by list comprehensions; a whole block is packed per step (accumulate +
bisect); log blocks are deflated by worker threads, and a big log section is
built by a forked worker process while this one writes the refs (log blocks do
not depend on where their section starts). Every path writes the same bytes.
"""
from __future__ import annotations

import multiprocessing
import os
import zlib
from bisect import bisect_right
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from itertools import accumulate
from typing import Any, Callable, Sequence

from reftable_core.reftable.block import MAX_RESTARTS, common_prefix_len, varint
from reftable_core.errors import EntryTooBigError
from reftable_core.reftable.record import (
    BLOCK_TYPE_LOG,
    BLOCK_TYPE_OBJ,
    LOG_UPDATE,
    REF_SYMREF,
    REF_VAL1,
    REF_VAL2,
    LogRecord,
    RefRecord,
)
from reftable_core.reftable.writer import TableWriter, WriterOptions

_MAX_U64 = (1 << 64) - 1
# varints of every value below 2**14 (prefix lengths, (suffix_len << 3) | type)
_SV = [varint(i) for i in range(1 << 14)]
_NSV = len(_SV)


try:        # numpy (a matplotlib dependency) finds prefix lengths ~5x faster
    import numpy as _np
except ImportError:     # pragma: no cover
    _np = None


def _np_prefixes(prev_key: bytes, ks: Sequence[bytes]) -> list[int]:
    """Common prefix length of each key with the one before it (prev_key for ks[0])."""
    width = max(len(prev_key), max(map(len, ks))) + 1
    rows = [prev_key.ljust(width, b"\0")]
    rows += [k.ljust(width, b"\0") for k in ks]
    a = _np.frombuffer(b"".join(rows), dtype=_np.uint8).reshape(len(rows), width)
    diff = a[1:] != a[:-1]
    first = diff.argmax(axis=1)
    # identical rows (never for distinct keys without NULs) would report 0; keep them exact
    same = ~diff.any(axis=1)
    if same.any():
        first[same] = width
    lens = _np.fromiter(map(len, ks), dtype=_np.int64, count=len(ks))
    prev_lens = _np.concatenate(([len(prev_key)], lens[:-1]))
    return _np.minimum(first, _np.minimum(lens, prev_lens)).tolist()


def _log_tail(name: bytes, email: bytes, time: int, tz: int, message: bytes) -> bytes:
    return b"".join((varint(len(name)), name, varint(len(email)), email, varint(time),
                     (tz & 0xFFFF).to_bytes(2, "big"), varint(len(message)), message))


_MALLOC_TUNED = False


def _tune_malloc() -> None:
    """zlib.compress() allocates ~256 KiB of state per call; glibc gives that memory
    back to the system after every call (heap trimming), so each block pays page
    faults again. Keeping freed memory in the process halves the deflate cost of
    a log section. Process-wide, harmless, and a no-op where mallopt is missing."""
    global _MALLOC_TUNED
    if _MALLOC_TUNED:
        return
    _MALLOC_TUNED = True
    try:
        import ctypes
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-1, 256 << 20)     # M_TRIM_THRESHOLD
        libc.mallopt(-2, 16 << 20)      # M_TOP_PAD
    except (OSError, AttributeError):
        pass


class _Deflated:
    """Stands in for a full log BlockWriter whose body is being deflated by a worker
    thread (zlib releases the GIL); TableWriter._flush() reads these fields and
    calls finish() exactly as it would on the BlockWriter."""

    __slots__ = ("typ", "entries", "restarts", "last_key", "buf", "_head", "_future")

    def __init__(self, bw: Any, pool: ThreadPoolExecutor) -> None:
        self.typ = bw.typ
        self.entries = bw.entries
        self.restarts = bw.restarts
        self.last_key = bw.last_key
        buf = bw.buf
        for r in bw.restarts:                       # as BlockWriter.finish()
            buf += r.to_bytes(3, "big")
        buf += len(bw.restarts).to_bytes(2, "big")
        h = bw.header_off
        buf[h + 1:h + 4] = len(buf).to_bytes(3, "big")
        self.buf = buf
        self._head = bytes(buf[:h + 4])
        self._future = pool.submit(zlib.compress, bytes(buf[h + 4:]), bw.compression_level)

    def finish(self) -> bytes:
        return self._head + self._future.result()


Records = Callable[[int, int, Sequence[bytes], list[int]], list[bytes]]


def _prefixes(pk: bytes, ks: Sequence[bytes]) -> list[int]:
    """Common prefix length of each key with the one before it (pk for ks[0])."""
    if _np is not None and len(ks) > 64:
        return _np_prefixes(pk, ks)
    prev = [pk]
    prev += ks[:-1]
    # big-int xor, as block.common_prefix_len does it
    return [(m - ((x.bit_length() + 7) >> 3)) if (x := int.from_bytes(a[:(m := (
            la if (la := len(a)) < (lb := len(b)) else lb))], "big")
            ^ int.from_bytes(b[:m], "big")) else m
            for a, b in zip(prev, ks)]


def _fill(tw: TableWriter, names: Sequence[bytes], records: Records, vts: Sequence[int] | int,
          suffix: bytes = b"", tick: Callable[[int], None] | None = None, window: int = 65536,
          prefixes: list[int] | None = None, keep_prefixes: list[int] | None = None,
          blocks: list[tuple[int, int]] | None = None) -> None:
    """Append one record per name, in order, block by block (see _fill_loop for the
    record model). Packs a whole block per step: the bytes each record would take
    (restart points re-encoded with prefix 0, plus their 3-byte restart entry) are
    summed with itertools.accumulate and the block's end found by bisect, which is
    exactly where BlockWriter.add() would first refuse a record."""
    bs = tw.options.block_size
    if bs > 150_000:        # so many restarts per block that MAX_RESTARTS could matter
        return _fill_loop(tw, names, records, vts, suffix, tick, window, prefixes,
                          keep_prefixes, blocks)
    ri = tw.options.restart_interval
    sv = _SV
    nsv = _NSV
    n = len(names)
    if not n:
        return
    xs = len(suffix)
    bw = tw._bw
    if bw is None:
        bw = tw._bw = tw._new_block(tw._section)
    prev_key = bw.last_key if bw.entries else tw._last_key
    if blocks is not None:
        blocks.append((0, tw._next))
    pool = None
    if tw._section == BLOCK_TYPE_LOG:
        _tune_malloc()
        pool = ThreadPoolExecutor(2)
    pending: deque[_Deflated] = deque()
    const_vt = vts if isinstance(vts, int) else -1

    # a sliding buffer of encoded records: global index base + j
    base = 0
    produced = 0
    kbuf: list[bytes] = []
    pbuf: list[int] = []
    nat: list[bytes] = []
    nlen: list[int] = []
    zero_p: list[int] = []          # global indexes whose key shares nothing with the previous

    def produce() -> None:
        nonlocal produced
        lo, hi = produced, min(n, produced + window)
        ks = names[lo:hi]
        if prefixes is not None:
            ps = prefixes[lo:hi]
        else:
            # the previous key only matters through its name part (for a fresh
            # block the first record is a restart point and its prefix unused)
            pk = names[lo - 1] if lo else (prev_key[:len(prev_key) - xs] if xs else prev_key)
            ps = _prefixes(pk, ks)
            if keep_prefixes is not None:
                keep_prefixes.extend(ps)
        recs = records(lo, hi, ks, ps)
        kbuf.extend(ks)
        pbuf.extend(ps)
        nat.extend(recs)
        nlen.extend(map(len, recs))
        if 0 in ps:
            zero_p.extend(lo + j for j, p in enumerate(ps) if p == 0)
        produced = hi

    def restart_rec(i: int) -> bytes:
        j = i - base
        k = kbuf[j]
        p = pbuf[j]
        r = nat[j]
        vt = const_vt if const_vt >= 0 else vts[i]           # type: ignore[index]
        e = ((len(k) + xs - p) << 3) | vt
        hl = (1 if p < 128 else len(varint(p))) + (len(sv[e]) if e < nsv else len(varint(e)))
        e0 = ((len(k) + xs) << 3) | vt
        return sv[0] + (sv[e0] if e0 < nsv else varint(e0)) + k + r[hl + len(k) - p:]

    def flush_pending(keep: int) -> None:
        cur = tw._bw
        while len(pending) > keep:
            tw._bw = pending.popleft()             # type: ignore[assignment]
            tw._flush()
        tw._bw = cur

    buf = bw.buf
    restarts = bw.restarts
    nrest = len(restarts)
    entries = bw.entries
    free = bs - len(buf)
    zpos = 0                        # next candidate in zero_p
    est = 64                        # records tried per step (grows to a block's worth)
    b = 0
    try:
        while b < n:
            # enough records buffered for a whole block (each takes >= 1 byte + its value)
            while produced < n and produced - b < 2 * (bs // 8) + ri:
                produce()
            if b - base > window:
                cut = b - base
                del kbuf[:cut], pbuf[:cut], nat[:cut], nlen[:cut]
                base = b
            j0 = b - base
            kmax = min(produced - b, est)
            w = nlen[j0:j0 + kmax]
            t0 = (-entries) % ri
            forced = {}
            for t in range(t0, kmax, ri):
                r = restart_rec(b + t)
                forced[t] = r
                w[t] = len(r) + 3
            while zpos < len(zero_p) and zero_p[zpos] < b:
                zpos += 1
            zts = []
            z = zpos
            while z < len(zero_p) and zero_p[z] < b + kmax:
                t = zero_p[z] - b
                if t not in forced:
                    zts.append(t)
                    w[t] += 3
                z += 1
            acc = list(accumulate(w))
            room = free - 2 - 3 * nrest
            cnt = bisect_right(acc, room)
            if cnt == 0:
                if entries == 0:
                    raise EntryTooBigError(f"record {kbuf[j0][:80]!r} does not fit a block "
                                           f"of {bs} bytes")
            else:
                rs = sorted([t for t in forced if t < cnt] + [t for t in zts if t < cnt])
                recs = nat[j0:j0 + cnt]
                for t in forced:
                    if t < cnt:
                        recs[t] = forced[t]
                used0 = bs - free
                for c, t in enumerate(rs):
                    restarts.append(used0 + (acc[t - 1] if t else 0) - 3 * c)
                nrest += len(rs)
                buf += b"".join(recs)
                free = bs - len(buf)
                entries += cnt
                b += cnt
                prev_key = kbuf[j0 + cnt - 1] + suffix if xs else kbuf[j0 + cnt - 1]
                bw.entries = entries
                bw.last_key = prev_key
                if tick:
                    tick(cnt)
                if cnt == kmax:
                    continue                          # all tried records fit: try more
                est = max(est, entries + ri)
            if b >= n:
                break
            # the block is full: hand it over, start the next one
            bw.entries = entries
            if pool is not None:
                pending.append(_Deflated(bw, pool))
                tw._bw = None
                flush_pending(8)
            else:
                tw._flush()
            bw = tw._bw = tw._new_block(tw._section)
            buf = bw.buf
            restarts = bw.restarts
            nrest = 0
            entries = 0
            free = bs - len(buf)
            if blocks is not None:
                blocks.append((b, tw._next))
        if pool is not None:
            flush_pending(0)
    finally:
        if pool is not None:
            pool.shutdown()
    tw._last_key = prev_key


def _fill_loop(tw: TableWriter, names: Sequence[bytes], records: Records, vts: Sequence[int] | int,
          suffix: bytes = b"", tick: Callable[[int], None] | None = None, window: int = 65536,
          prefixes: list[int] | None = None, keep_prefixes: list[int] | None = None,
          blocks: list[tuple[int, int]] | None = None) -> None:
    """Append one record per name, in order, block by block.

    A record's key is name + suffix (suffix: b"" for refs, NUL + reversed
    update index for logs; names contain no NUL, so keys share exactly the
    prefix their names share). records(lo, hi, names[lo:hi], prefixes) builds
    the prefix-compressed records of a window with list comprehensions; the
    loop below only packs them into blocks, re-encoding a restart point's
    record with prefix 0 (its value bytes are sliced off the compressed one).
    blocks, if given, receives (first record index, file offset) per block.
    """
    bs = tw.options.block_size
    ri = tw.options.restart_interval
    sv = _SV
    nsv = _NSV
    n = len(names)
    if not n:
        return
    xs = len(suffix)
    bw = tw._bw
    if bw is None:
        bw = tw._bw = tw._new_block(tw._section)
    buf = bw.buf
    restarts = bw.restarts
    nrest = len(restarts)
    entries = bw.entries
    free = bs - len(buf)
    prev_key = bw.last_key if bw.entries else tw._last_key
    if blocks is not None:
        blocks.append((0, tw._next))
    # log blocks: deflate in a worker thread while this one packs the next blocks
    pool = None
    if tw._section == BLOCK_TYPE_LOG:
        _tune_malloc()
        pool = ThreadPoolExecutor(2)
    pending: deque[_Deflated] = deque()

    def flush_pending(keep: int) -> None:
        cur = tw._bw
        while len(pending) > keep:
            tw._bw = pending.popleft()             # type: ignore[assignment]
            tw._flush()
        tw._bw = cur
    for lo in range(0, n, window):
        hi = min(n, lo + window)
        ks = names[lo:hi]
        if prefixes is not None:
            ps = prefixes[lo:hi]
        else:
            # the previous key only matters through its name part
            pk = prev_key[:len(prev_key) - xs] if xs and lo else prev_key
            if _np is not None and hi - lo > 64:
                ps = _np_prefixes(pk, ks)
            else:
                prev = [pk]
                prev += ks[:-1]
                # common prefix lengths with the previous key (big-int xor, as
                # block.common_prefix_len does it)
                ps = [(m - ((x.bit_length() + 7) >> 3)) if (x := int.from_bytes(a[:(m := (
                      la if (la := len(a)) < (lb := len(b)) else lb))], "big")
                      ^ int.from_bytes(b[:m], "big")) else m
                      for a, b in zip(prev, ks)]
            if keep_prefixes is not None:
                keep_prefixes += ps
        nat = records(lo, hi, ks, ps)
        vtw = None if isinstance(vts, int) else vts
        j = 0
        w = hi - lo
        while j < w:
            if entries % ri == 0:
                k = ks[j]
                p = ps[j]
                r = nat[j]
                vt = vts if vtw is None else vtw[lo + j]
                e = ((len(k) + xs - p) << 3) | vt
                hl = ((1 if p < 128 else len(varint(p)))
                      + (len(sv[e]) if e < nsv else len(varint(e))))
                e0 = ((len(k) + xs) << 3) | vt
                r = sv[0] + (sv[e0] if e0 < nsv else varint(e0)) + k + r[hl + len(k) - p:]
                restart = nrest < MAX_RESTARTS
            else:
                r = nat[j]
                restart = ps[j] == 0 and nrest < MAX_RESTARTS
            ln = len(r)
            if 2 + 3 * (nrest + restart) + ln > free:
                if entries == 0:
                    raise EntryTooBigError(f"record {ks[j][:80]!r} does not fit a block "
                                           f"of {bs} bytes")
                bw.entries = entries
                bw.last_key = ks[j - 1] + suffix if j else prev_key
                if pool is not None:
                    pending.append(_Deflated(bw, pool))
                    tw._bw = None
                    flush_pending(8)
                else:
                    tw._flush()
                bw = tw._bw = tw._new_block(tw._section)
                buf = bw.buf
                restarts = bw.restarts
                nrest = 0
                entries = 0
                free = bs - len(buf)
                if blocks is not None:
                    blocks.append((lo + j, tw._next))
                continue
            if restart:
                restarts.append(bs - free)
                nrest += 1
            buf += r
            free -= ln
            entries += 1
            j += 1
        prev_key = ks[-1] + suffix
        bw.entries = entries
        bw.last_key = prev_key
        if tick:
            tick(hi - lo)
    if pool is not None:
        flush_pending(0)
        pool.shutdown()
    tw._last_key = prev_key


def _generic_records(head: bytes, values: Sequence[bytes], peeled: Sequence[bytes | None] | None,
                     tail: bytes = b"", extra: int = 0, vt: int = 0) -> Records:
    """records() for keys of any length (varints not from the table)."""
    def records(lo: int, hi: int, ks: Sequence[bytes], ps: list[int]) -> list[bytes]:
        out = []
        pvs = peeled[lo:hi] if peeled is not None else [None] * (hi - lo)
        for k, p, v, pv in zip(ks, ps, values[lo:hi], pvs):
            t = vt or (REF_VAL1 if pv is None else REF_VAL2)
            out.append(varint(p) + varint(((len(k) + extra - p) << 3) | t) + k[p:] + head + v
                       + (pv or b"") + tail)
        return out
    return records


def _obj_offsets(blocks: list[tuple[int, int]], n: int,
                 value_lists: Sequence[Sequence[bytes | None]]) -> dict[bytes, list[int]]:
    """object id -> ascending offsets of the ref blocks whose records refer to it."""
    bounds = [b for b, _ in blocks] + [n]
    offs = [o for _, o in blocks]
    lists = [v for v in value_lists if v.count(None) != len(v)]
    found: dict[bytes, list[int]] = {}
    if _np is not None and lists:
        uniq: dict[bytes | None, int] = {}
        for vals in lists:
            uniq.update(dict.fromkeys(vals))
        uniq.pop(None, None)
        index: dict[bytes | None, int] = {v: i for i, v in enumerate(uniq)}
        index[None] = -1
        counts = _np.diff(_np.asarray(bounds, dtype=_np.int64))
        blk_of = _np.repeat(_np.arange(len(offs), dtype=_np.int64), counts)
        nb = len(offs)
        parts = []
        for vals in lists:
            codes = _np.array(list(map(index.__getitem__, vals)), dtype=_np.int64)
            keep = codes >= 0
            parts.append(codes[keep] * nb + blk_of[keep])
        pairs = _np.sort(_np.concatenate(parts))
        if len(pairs):
            pairs = pairs[_np.concatenate(([True], pairs[1:] != pairs[:-1]))]  # (object, block)
        obj_idx = pairs // nb
        blk_idx = (pairs % nb).tolist()
        starts = _np.flatnonzero(_np.diff(obj_idx, prepend=-1)).tolist() + [len(pairs)]
        by_code = list(uniq)
        objs_sorted = obj_idx[starts[:-1]].tolist() if len(pairs) else []
        for c, a, b in zip(objs_sorted, starts, starts[1:]):
            found[by_code[c]] = [offs[i] for i in blk_idx[a:b]]  # type: ignore[index]
        return found
    for (a, off), b in zip(blocks, bounds[1:]):
        seen: set[bytes | None] = set()
        for vals in lists:
            seen.update(vals[a:b])
        seen.discard(None)
        for v in seen:
            lst = found.get(v)                             # type: ignore[arg-type]
            if lst is None:
                found[v] = [off]                           # type: ignore[index]
            else:
                lst.append(off)
    return found


def _encode_offsets(offs: list[int], cache: dict[int, bytes]) -> bytes:
    """record.encode_obj_value for one offset list, with memoized varints."""
    n = len(offs)
    deltas = [offs[0]] if n else []
    if n > 1:
        deltas += [b - a for a, b in zip(offs, offs[1:])]
    for d in set(deltas).difference(cache):
        cache[d] = varint(d)
    body = b"".join(map(cache.__getitem__, deltas))
    return varint(n) + body if n == 0 or n >= 8 else body


def _fast_write_objs(tw: TableWriter) -> None:
    """TableWriter._write_objs with a faster offset encoder (same records, same bytes)."""
    objs = tw._obj
    assert objs is not None
    oids = sorted(objs)
    maxc = 1
    for a, b in zip(oids, oids[1:]):
        c = common_prefix_len(a, b)
        if c > maxc:
            maxc = c
    n = maxc + 1
    tw.stats.object_id_len = n
    tw._section = BLOCK_TYPE_OBJ
    tw._bw = tw._new_block(BLOCK_TYPE_OBJ)
    cache: dict[int, bytes] = {}
    for oid in oids:
        offs = objs[oid]
        k = len(offs)
        key, vt, val = oid[:n], (k if 0 < k < 8 else 0), _encode_offsets(offs, cache)
        if tw._bw.add(key, vt, val):
            continue
        tw._flush()
        tw._bw = tw._new_block(BLOCK_TYPE_OBJ)
        if tw._bw.add(key, vt, val):
            continue
        tw._bw.add(key, 0, varint(0))
    tw._finish_section()


PARALLEL_LOGS_FROM = 50_000


def _fill_logs(tw: TableWriter, names: Sequence[bytes], values: Sequence[bytes], log: dict,
               msg: bytes, ui: int, prefixes: list[int] | None,
               tick: Callable[[int], None] | None) -> None:
    """One log record per name after HEAD's (already added), the fast way."""
    sv = _SV
    suffix = b"\0" + (_MAX_U64 - ui).to_bytes(8, "big")
    head = suffix + log["old"]
    tail = _log_tail(log["name"], log["email"], log["time"], log["tz"], msg)
    lmap = {v: head + v + tail for v in dict.fromkeys(values)}
    lget = lmap.__getitem__

    def log_records(lo: int, hi: int, ks: Sequence[bytes], ps: list[int]) -> list[bytes]:
        return [sv[p] + sv[((len(k) + 9 - p) << 3) | 1] + k[p:] + lget(v)
                for k, p, v in zip(ks, ps, values[lo:hi])]
    if max(map(len, names), default=0) > 1000:
        log_records = _generic_records(head, values, None, tail, 9, LOG_UPDATE)
    # a log key is the refname + NUL + 8 bytes and refnames contain no NUL, so
    # neighbouring log keys share exactly what their refnames share (and the
    # first one shares nothing with HEAD's, as the first refname with "HEAD")
    _fill(tw, names, log_records, LOG_UPDATE, suffix, tick, prefixes=prefixes)


class _Ready:
    """A finished log block (built by the worker process) for TableWriter._flush()."""

    __slots__ = ("typ", "entries", "restarts", "last_key", "buf", "_data")

    def __init__(self, data: bytes, entries: int, nrest: int, last_key: bytes) -> None:
        self.typ = BLOCK_TYPE_LOG
        self.entries = entries
        self.restarts = [0] * nrest            # only counted by the writer's stats
        self.last_key = last_key
        self.buf = bytearray()
        self._data = data

    def finish(self) -> bytes:
        return self._data


def _log_worker(conn: Any, options: WriterOptions, head_target: bytes, names: Sequence[bytes],
                values: Sequence[bytes], log: dict, msg: bytes) -> None:
    """Child process: build the log section in a throw-away writer and send its blocks."""
    try:
        import io
        ui = options.min_update_index
        tw = TableWriter(io.BytesIO(), options)
        tw.add_ref(RefRecord(b"HEAD", ui, REF_SYMREF, None, None, head_target))
        tw.add_log(LogRecord(b"HEAD", ui, LOG_UPDATE, log["old"], log["head_new"],
                             log["name"], log["email"], log["time"], log["tz"], msg))
        blocks: list[tuple[bytes, int, int, bytes]] = []
        real_flush = tw._flush

        def capture() -> None:
            bw = tw._bw
            if bw is None or bw.entries == 0 or bw.typ != BLOCK_TYPE_LOG:
                real_flush()
                return
            blocks.append((bw.finish(), bw.entries, len(bw.restarts), bw.last_key))
            tw._bw = None
        tw._flush = capture                                   # type: ignore[method-assign]
        _fill_logs(tw, names, values, log, msg, ui, None, None)
        capture()                                             # the last, partial block
        conn.send(("ok", blocks, tw._last_key))
    except BaseException as e:                                # noqa: BLE001
        conn.send(("error", repr(e), b""))
    finally:
        conn.close()


def _replay_log_blocks(tw: TableWriter, child: Any, recv: Any, log: dict, msg: bytes,
                       ui: int) -> None:
    """Put the worker's log blocks into tw, after HEAD's log record was added."""
    try:
        status, blocks, last_key = recv.recv()
    finally:
        child.join()
    if status != "ok":
        raise RuntimeError(f"log section worker failed: {blocks}")
    tw._bw = None               # HEAD's log record is the first one of the first block
    for data, entries, nrest, key in blocks:
        tw._bw = _Ready(data, entries, nrest, key)           # type: ignore[assignment]
        tw._flush()
    tw._last_key = last_key


def write_bulk_table(path: str | os.PathLike[str], options: WriterOptions,
                     names: Sequence[bytes], values: Sequence[bytes],
                     peeled: Sequence[bytes | None], *, head_target: bytes = b"refs/heads/main",
                     log: dict | None = None, fast: bool = True,
                     tick: Callable[[int], None] | None = None) -> None:
    """HEAD -> head_target, then names[i] -> values[i] (peeled[i] for annotated tags),
    then, if log is given, a log record for HEAD and for every ref.

    log: {"old": bytes, "name": bytes, "email": bytes, "time": int, "tz": int,
    "message": bytes (ending in a newline), "head_new": bytes}. All refs get
    update_index = options.min_update_index.
    """
    ui = options.min_update_index
    msg = b""
    if log is not None:
        msg = log["message"]
        if not options.exact_log_message:
            msg = msg.rstrip(b"\n") + b"\n"
    # A big log section is built in a forked process while this one writes the
    # refs: log blocks do not depend on where the log section starts.
    child = recv = None
    if (fast and log is not None and len(names) >= PARALLEL_LOGS_FROM and hasattr(os, "fork")
            and options.block_size <= 150_000):
        try:
            mp = multiprocessing.get_context("fork")
            recv, send = mp.Pipe(duplex=False)
            child = mp.Process(target=_log_worker,
                               args=(send, options, head_target, names, values, log, msg),
                               daemon=True)
            child.start()
            send.close()
        except (OSError, ValueError):
            child = recv = None
    try:
        with open(path, "wb") as out:
            tw = TableWriter(out, options)
            if fast and hasattr(tw, "_write_objs"):
                tw._write_objs = lambda: _fast_write_objs(tw)     # type: ignore[method-assign]
            tw.add_ref(RefRecord(b"HEAD", ui, REF_SYMREF, None, None, head_target))
            if not fast:
                for nm, v, pv in zip(names, values, peeled):
                    if pv is None:
                        tw.add_ref(RefRecord(nm, ui, REF_VAL1, v))
                    else:
                        tw.add_ref(RefRecord(nm, ui, REF_VAL2, v, pv))
                    if tick:
                        tick(1)
            else:
                uih = varint(ui - options.min_update_index)
                sv = _SV
                tags = peeled.count(None) != len(peeled)

                # the encoded value per distinct object id (a few thousand at most)
                pairs = dict.fromkeys(zip(values, peeled))
                vmap: dict[bytes, bytes] = {v: uih + v + (pv or b"") for v, pv in pairs}
                if len(vmap) != len(pairs):
                    vmap = {}                   # one id with two peeled ids: no shortcut
                vget = vmap.__getitem__

                def ref_records(lo: int, hi: int, ks: Sequence[bytes],
                                ps: list[int]) -> list[bytes]:
                    vs = values[lo:hi]
                    if vmap:
                        if not tags:
                            return [sv[p] + sv[((len(k) - p) << 3) | 1] + k[p:] + vget(v)
                                    for k, p, v in zip(ks, ps, vs)]
                        return [sv[p] + sv[((len(k) - p) << 3) | (1 if pv is None else 2)] + k[p:]
                                + vget(v) for k, p, v, pv in zip(ks, ps, vs, peeled[lo:hi])]
                    return [sv[p] + sv[((len(k) - p) << 3) | 1] + k[p:] + uih + v if pv is None
                            else sv[p] + sv[((len(k) - p) << 3) | 2] + k[p:] + uih + v + pv
                            for k, p, v, pv in zip(ks, ps, vs, peeled[lo:hi])]
                if max(map(len, names), default=0) > 1000:       # beyond the varint table
                    ref_records = _generic_records(uih, values, peeled)
                vts = [REF_VAL1 if pv is None else REF_VAL2 for pv in peeled] if tags else REF_VAL1
                prefixes: list[int] = []
                blocks: list[tuple[int, int]] = []
                _fill(tw, names, ref_records, vts, b"", tick, keep_prefixes=prefixes, blocks=blocks)
                del vts
                objs = tw._obj
                if objs is not None:
                    for v, offs in _obj_offsets(blocks, len(names), (values, peeled)).items():
                        lst = objs.get(v)
                        if lst is None:
                            objs[v] = offs
                        else:
                            lst.extend(o for o in offs if o != lst[-1])
            if log is not None:
                tw.add_log(LogRecord(b"HEAD", ui, LOG_UPDATE, log["old"], log["head_new"],
                                     log["name"], log["email"], log["time"], log["tz"], msg))
                if not fast:
                    for nm, v in zip(names, values):
                        tw.add_log(LogRecord(nm, ui, LOG_UPDATE, log["old"], v, log["name"],
                                             log["email"], log["time"], log["tz"], msg))
                        if tick:
                            tick(1)
                elif child is not None:
                    _replay_log_blocks(tw, child, recv, log, msg, ui)
                    if tick:
                        tick(len(names))
                else:
                    _fill_logs(tw, names, values, log, msg, ui,
                               prefixes if len(prefixes) == len(names) else None, tick)
            tw.close()
    finally:
        if child is not None and child.is_alive():     # an error before the replay
            child.terminate()
            child.join()
        if recv is not None:
            recv.close()
