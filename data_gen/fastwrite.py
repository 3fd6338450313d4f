"""Write a dataset's base table: HEAD, then a million refs, then a log record each.

Contract: `write_bulk_table(path, options, names, values, peeled, ...)` writes
HEAD (a symref to refs/heads/main), then names[i] -> values[i] (peeled[i] for an
annotated tag) in the given (sorted) order, then, if log is given, one log
record for HEAD and one per ref (all with the same update index, old id,
identity, time and message; only the new id differs). Every byte comes from
reftable_core's TableWriter: with fast=True the records are fed to its bulk
add_refs()/add_logs() in steps (generators, no call per record) together with
the keys' prefix lengths, found by numpy (when it is there) for refs and logs
at once (a log key is the refname, a NUL and 8 bytes, and refnames hold no NUL:
neighbouring log keys share what their refnames share), and a big log
section is deflated by a thread pool (TableWriter's executor); fast=False
calls add_ref()/add_log() once per record. Both write the same bytes
(tests/data_gen compares them).
"""
from __future__ import annotations

import ctypes
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any
from concurrent.futures import ThreadPoolExecutor

from reftable_core.reftable.record import (
    LOG_UPDATE,
    REF_SYMREF,
    REF_VAL1,
    REF_VAL2,
    LogRecord,
    RefRecord,
)
from reftable_core.reftable.writer import TableWriter, WriterOptions

PARALLEL_LOGS_FROM = 50_000     # log records from which log blocks are deflated in threads
DEFLATE_THREADS = 2
STEP = 65536                    # records per add_refs()/add_logs() call (progress ticks)

try:        # numpy (a matplotlib dependency) finds prefix lengths ~5x faster
    import numpy as np
except ImportError:     # pragma: no cover
    np = None

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
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-1, 256 << 20)     # M_TRIM_THRESHOLD
        libc.mallopt(-2, 16 << 20)      # M_TOP_PAD
    except (OSError, AttributeError):
        pass


def _prefixes(prev_key: bytes, ks: Sequence[bytes]) -> list[int] | None:
    """Common prefix length of each key with the one before it (prev_key for ks[0]),
    or None without numpy (TableWriter then finds them itself)."""
    if np is None or not ks:
        return None
    width = max(len(prev_key), max(map(len, ks))) + 1
    rows = [prev_key.ljust(width, b"\0")]
    rows += [k.ljust(width, b"\0") for k in ks]
    a = np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(len(rows), width)
    diff = a[1:] != a[:-1]
    first = diff.argmax(axis=1)
    # identical rows (never for distinct keys without NULs) would report 0; keep them exact
    same = ~diff.any(axis=1)
    if same.any():
        first[same] = width
    lens = np.fromiter(map(len, ks), dtype=np.int64, count=len(ks))
    prev_lens = np.concatenate(([len(prev_key)], lens[:-1]))
    return np.minimum(first, np.minimum(lens, prev_lens)).tolist()


def _refs(names: Sequence[bytes], values: Sequence[bytes], peeled: Sequence[bytes | None],
          ui: int) -> Iterator[RefRecord]:
    """The refs as records: one record object per value type, updated between
    yields (TableWriter.add_refs reads each record as it comes and keeps none)."""
    one = RefRecord(b"", ui, REF_VAL1)
    two = RefRecord(b"", ui, REF_VAL2)
    for nm, v, pv in zip(names, values, peeled):
        if pv is None:
            one.refname = nm
            one.value = v
            yield one
        else:
            two.refname = nm
            two.value = v
            two.target_value = pv
            yield two


def _logs(names: Sequence[bytes], values: Sequence[bytes], log: dict, ui: int,
          msg: bytes) -> Iterator[LogRecord]:
    """The log records, one record object updated between yields (as _refs)."""
    rec = LogRecord(b"", ui, LOG_UPDATE, log["old"], None, log["name"], log["email"],
                    log["time"], log["tz"], msg)
    for nm, v in zip(names, values):
        rec.refname = nm
        rec.new_id = v
        yield rec


def write_bulk_table(path: str | os.PathLike[str], options: WriterOptions,
                     names: Sequence[bytes], values: Sequence[bytes],
                     peeled: Sequence[bytes | None], *, log: dict | None = None,
                     fast: bool = True,
                     tick: Callable[[int], None] | None = None) -> None:
    """HEAD -> refs/heads/main, then names[i] -> values[i] (peeled[i] for annotated tags),
    then, if log is given, a log record for HEAD and for every ref.

    log: {"old": bytes, "name": bytes, "email": bytes, "time": int, "tz": int,
    "message": bytes, "head_new": bytes}. All records get
    update_index = options.min_update_index.
    """
    ui = options.min_update_index
    pool = None
    if fast and log is not None and len(names) >= PARALLEL_LOGS_FROM:
        _tune_malloc()
        pool = ThreadPoolExecutor(DEFLATE_THREADS)
    try:
        with open(path, "wb") as out:
            tw = TableWriter(out, options, executor=pool)
            tw.add_ref(RefRecord(b"HEAD", ui, REF_SYMREF, None, None, b"refs/heads/main"))
            n = len(names)
            step = STEP if fast else 1
            ps = _prefixes(b"HEAD", names) if fast else None

            def in_steps(records: Callable[[int, int], Iterator[Any]],
                         add_many: Callable[..., Any], add_one: Callable[[Any], Any]) -> None:
                """records(lo, hi) for names[lo:hi], step by step: to the bulk add_many
                with their keys' prefix lengths (fast), else one by one to add_one."""
                for lo in range(0, n, step):
                    hi = min(n, lo + step)
                    recs = records(lo, hi)
                    if fast:
                        add_many(recs, ps[lo:hi] if ps is not None else None)
                    else:
                        add_one(next(recs))
                    if tick:
                        tick(hi - lo)

            in_steps(lambda lo, hi: _refs(names[lo:hi], values[lo:hi], peeled[lo:hi], ui),
                     tw.add_refs, tw.add_ref)
            if log is not None:
                lg: dict = log
                msg = lg["message"]
                tw.add_log(LogRecord(b"HEAD", ui, LOG_UPDATE, lg["old"], lg["head_new"],
                                     lg["name"], lg["email"], lg["time"], lg["tz"], msg))
                in_steps(lambda lo, hi: _logs(names[lo:hi], values[lo:hi], lg, ui, msg),
                         tw.add_logs, tw.add_log)
            tw.close()
    finally:
        if pool is not None:
            pool.shutdown()
