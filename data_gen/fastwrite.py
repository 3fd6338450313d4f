"""Bulk fast path for reftable_core.writer.TableWriter (dataset generation only).

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
"""
from __future__ import annotations

import os
from collections import defaultdict
from typing import Callable, Sequence

from reftable_core.block import MAX_RESTARTS, common_prefix_len, varint
from reftable_core.errors import EntryTooBigError
from reftable_core.record import (BLOCK_TYPE_OBJ, LOG_UPDATE, REF_SYMREF, REF_VAL1, REF_VAL2, LogRecord,
                                  RefRecord)
from reftable_core.writer import TableWriter, WriterOptions

_MAX_U64 = (1 << 64) - 1
# varints of every value below 2**14 (prefix lengths, (suffix_len << 3) | type)
_SV = [varint(i) for i in range(1 << 14)]
_NSV = len(_SV)


def _log_tail(name: bytes, email: bytes, time: int, tz: int, message: bytes) -> bytes:
    return b"".join((varint(len(name)), name, varint(len(email)), email, varint(time),
                     (tz & 0xFFFF).to_bytes(2, "big"), varint(len(message)), message))


def _fill(tw: TableWriter, keys: Sequence[bytes],
          make_payloads: Callable[[int, int], list[bytes]], vts: Sequence[int] | int,
          obj_values: Sequence[Sequence[bytes | None]] | None,
          tick: Callable[[int], None] | None, window: int = 65536,
          prefixes: list[int] | None = None, keep_prefixes: list[int] | None = None) -> None:
    """Append records (key, value type, encoded value) in order, block by block.

    Works in windows: the prefix lengths and the prefix-compressed records of a
    window are built by list comprehensions first, then a tight loop only packs
    them into blocks (restart points re-encode their record with prefix 0).
    """
    bs = tw.options.block_size
    ri = tw.options.restart_interval
    sv = _SV
    nsv = _NSV
    n = len(keys)
    if not n:
        return
    bw = tw._bw
    if bw is None:
        bw = tw._bw = tw._new_block(tw._section)
    buf = bw.buf
    restarts = bw.restarts
    nrest = len(restarts)
    entries = bw.entries
    free = bs - len(buf)
    off = tw._next
    bstart = 0                      # global index of the block's first record of ours
    objs = tw._obj if obj_values is not None else None
    prev_key = bw.last_key if bw.entries else tw._last_key

    # object id -> offsets of the blocks referring to it (merged into tw._obj at the end)
    found: defaultdict[bytes, list[int]] = defaultdict(list)
    obj_lists = [vals for vals in (obj_values or ()) if any(v is not None for v in vals)]

    def note_objs(a: int, b: int, at: int) -> None:
        if objs is None or b <= a:
            return
        seen: set[bytes | None] = set(obj_lists[0][a:b]) if obj_lists else set()
        for vals in obj_lists[1:]:
            seen.update(vals[a:b])
        seen.discard(None)
        for v in seen:
            found[v].append(at)                      # type: ignore[index]

    for lo in range(0, n, window):
        hi = min(n, lo + window)
        ks = keys[lo:hi]
        if prefixes is not None:
            ps = prefixes[lo:hi]
        else:
            prev = [prev_key]
            prev += ks[:-1]
            # common prefix lengths with the previous key (big-int xor, as
            # block.common_prefix_len does it)
            ps = [(m - ((x.bit_length() + 7) >> 3)) if (x := int.from_bytes(a[:(m := (
                  la if (la := len(a)) < (lb := len(b)) else lb))], "big")
                  ^ int.from_bytes(b[:m], "big")) else m
                  for a, b in zip(prev, ks)]
            if keep_prefixes is not None:
                keep_prefixes += ps
        pays = make_payloads(lo, hi)
        vtw = [vts] * (hi - lo) if isinstance(vts, int) else vts[lo:hi]
        if max(map(len, ks)) < (nsv >> 3) - 1:       # every varint comes from the table
            nat = [sv[p] + sv[((len(k) - p) << 3) | vt] + (k[p:] if p else k) + pay
                   for k, p, pay, vt in zip(ks, ps, pays, vtw)]
        else:
            nat = [varint(p) + varint(((len(k) - p) << 3) | vt) + (k[p:] if p else k) + pay
                   for k, p, pay, vt in zip(ks, ps, pays, vtw)]
        j = 0
        w = hi - lo
        while j < w:
            if entries % ri == 0:
                k = ks[j]
                e = (len(k) << 3) | vtw[j]
                r = sv[0] + (sv[e] if e < nsv else varint(e)) + k + pays[j]
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
                bw.last_key = ks[j - 1] if j else prev_key
                note_objs(bstart, lo + j, off)
                if tick:
                    tick(lo + j - bstart)
                tw._flush()
                bw = tw._bw = tw._new_block(tw._section)
                buf = bw.buf
                restarts = bw.restarts
                nrest = 0
                entries = 0
                free = bs - len(buf)
                off = tw._next
                bstart = lo + j
                continue
            if restart:
                restarts.append(bs - free)
                nrest += 1
            buf += r
            free -= ln
            entries += 1
            j += 1
        prev_key = ks[-1]
        bw.entries = entries
        bw.last_key = prev_key
    note_objs(bstart, n, off)
    if tick:
        tick(n - bstart)
    tw._last_key = keys[n - 1]
    if objs is not None:
        for v, offs in found.items():
            lst = objs.get(v)
            if lst is None:
                objs[v] = offs
            else:
                lst.extend(o for o in offs if o != lst[-1])


def _encode_offsets(offs: list[int], cache: dict[int, bytes]) -> bytes:
    """record.encode_obj_value for one offset list, with memoized varints."""
    n = len(offs)
    parts: list[bytes] = []
    if n == 0 or n >= 8:
        parts.append(varint(n))
    last = 0
    get = cache.get
    for o in offs:
        d = o - last
        v = get(d)
        if v is None:
            v = cache[d] = varint(d)
        parts.append(v)
        last = o
    return b"".join(parts)


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

            def ref_payloads(lo: int, hi: int) -> list[bytes]:
                return [uih + v if pv is None else uih + v + pv
                        for v, pv in zip(values[lo:hi], peeled[lo:hi])]
            vts = [REF_VAL1 if pv is None else REF_VAL2 for pv in peeled]
            prefixes: list[int] = []
            _fill(tw, names, ref_payloads, vts, (values, peeled), tick, keep_prefixes=prefixes)
            del vts
        if log is not None:
            msg = log["message"]
            if not options.exact_log_message:
                msg = msg.rstrip(b"\n") + b"\n"
            tw.add_log(LogRecord(b"HEAD", ui, LOG_UPDATE, log["old"], log["head_new"],
                                 log["name"], log["email"], log["time"], log["tz"], msg))
            if not fast:
                for nm, v in zip(names, values):
                    tw.add_log(LogRecord(nm, ui, LOG_UPDATE, log["old"], v, log["name"],
                                         log["email"], log["time"], log["tz"], msg))
                    if tick:
                        tick(1)
            else:
                suffix = b"\0" + (_MAX_U64 - ui).to_bytes(8, "big")
                keys = [nm + suffix for nm in names]
                old = log["old"]
                tail = _log_tail(log["name"], log["email"], log["time"], log["tz"], msg)

                def log_payloads(lo: int, hi: int) -> list[bytes]:
                    return [old + v + tail for v in values[lo:hi]]
                # a log key is the refname + NUL + 8 bytes and refnames contain no NUL,
                # so neighbouring log keys share exactly what their refnames share
                # (the first one, after HEAD's, shares nothing either way)
                _fill(tw, keys, log_payloads, LOG_UPDATE, None, tick,
                      prefixes=prefixes if len(prefixes) == len(keys) else None)
        tw.close()
