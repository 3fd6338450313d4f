"""Work counters: exact counts of the work the flags are about, always on.

Contract: WORK is one module-level Counters object. The core adds to its
attributes where a unit of I/O-sized work happens -- per block loaded, per read
of a block source, per tables.list read or stat, per packed-refs file (its lines
and bytes, per reader), per object read from a pack -- and NEVER per record in
the loops the flags study (reftable/loops.py, the packed-refs parse loops, the
record decoders stay untouched; the one exception, deletions_suppressed, is
counted in the merge loops' deletion branch, which a live record never reaches,
so a workload without tombstones runs the same bytecodes; likewise
seek_iter_copies, counted beside each iterator copy of a block seek's scan, which
only seek_in_place=off makes, and restart_keys_decoded, beside each restart key
decoded into a buffer, which only restart_key_in_place=off does). The writers'
key buffers are not counted per record at all: a writer hands them out through a
C-level callable that keeps its own count (reftable.buffers.KeyBuffers), added
here when the table writer closes. An increment is one attribute add on a global
(LOAD_GLOBAL, LOAD_ATTR, BINARY_OP, STORE_ATTR: four bytecodes), always on: a
switch to turn counting off would cost as much as the increment it saves. Its
cost, bounded by bytecodes: show-ref over 20k refs in one table makes about 600
increments (a read, a set-up and a slice per 4 KiB block of some 100 records),
2,400 bytecodes against the 2.9 million its hot loops alone execute: < 0.1 %,
and the same fraction (one increment set per block) at 200k refs.

The delta base cache keeps its own per-cache CacheStats (odb.delta_cache); a
cache registers them with track_cache() when it is built, and snapshot() sums
the stats of the caches built since the last reset() (peak_bytes: their
maximum). Caches built before a reset() are forgotten by it.

reset() zeroes everything; snapshot() -> {counter name: count}, every name in
COUNTER_NAMES (zeros included) plus the delta_cache_* sums. The names:

  blocks_read          reftable blocks whose header the block loader read
  blocks_set_up        blocks set up past their type byte (length, restarts)
  blocks_inflated      log blocks inflated (zlib)
  block_iters_built    record loops (git's block iterators) a table iterator started:
                       one per seek or section start (next_block_in_place=on), one per
                       block it reads records of (off)
  seek_iter_copies     iterator copies (offset and last key) a block seek's linear scan
                       made: two per record it passed, one for the record it stopped at
                       (seek_in_place=off; on: none)
  restart_keys_decoded restart keys a block seek's binary search decoded into a new
                       buffer, one per restart point it probed (restart_key_in_place=off;
                       on: none, each compared in place)
  source_preads        BlockSource reads served by os.pread into fresh bytes (mmap=off)
  source_pread_bytes   bytes those reads asked for
  source_mmap_slices   BlockSource reads served as slices of a map (mmap=on)
  source_maps          files mapped by a block source
  tables_opened        reftable files opened by a stack
  tables_list_reads    reads of tables.list (its bytes parsed into names)
  tables_list_stats    stat() calls comparing tables.list with the cached stat
  packed_files_parsed  packed-refs files parsed whole (packed_lookup=parse_all)
  packed_lines         packed-refs lines parsed (refs and "^" lines, header excluded):
                       every line by a parse_all load, the lines a bsearch walk crossed
  packed_bytes         bytes of packed-refs read or mapped by the parse_all readers
  packed_getc_locked   characters taken one locked read(1) call each (reader fgetc)
  packed_getc_unlocked characters taken from the reader's own buffer (getc_unlocked)
  packed_buffer_reads  os.read refills of that buffer
  packed_line_copies   lines handed to the parser as their own bytes objects (every
                       reader but mmap, which parses the map in place)
  packed_maps          packed-refs files mapped (reader mmap, bsearch; a file of at
                       most 32 KiB is read instead, as git does)
  packed_bsearch_seeks binary searches on the mapped file (packed_lookup=bsearch)
  refname_format_checks  refnames given git's format check by a packed-refs parse
  refname_normalized   normalized copies made by the safety check (normalize)
  refname_escape_scans safety checks by a component scan (escape_scan, skip_sane's failures)
  pack_objects_read    objects read from a pack (cache_or_unpack_entry)
  deletions_suppressed deletion records consumed inside a merged iterator's own loop
                       (suppress_deletions: the reader view with tombstone_suppression=off)
  deletions_returned   deletion records a merged iterator returned to a reader of the
                       reftable ref store (tombstone_suppression=on), each one it read
                       (the one past its bound included); it skipped them
  ref_iterators_built  merged ref iterators the reftable ref store built to read refs
                       (iterator_reuse=off: one per read; on: one per stack reload)
  refname_store_checks reads of the ref store by a transaction's refname availability
                       check (refs_verify_refname_available): one per leading directory
                       read, one per seek under refname/ (initial_transaction_check=on:
                       none in an initial transaction)
  library_name_checks  lookups of the stack by the reftable library's check of an added
                       table (skip_name_check=off: a seek to refname/ and a read per
                       leading directory of each ref it adds; on: none)
  loose_refs_written   loose ref files a files-backend transaction wrote and renamed
                       into place (one lock each; migrate_initial=on: only the symrefs
                       and root refs of refs migrate)
  writer_buffers_built   buffers the table writer built: one per record it took (its
                       key) and one per ref it indexed by object id (writer_scratch=off;
                       on: none)
  writer_buffers_reused  the same fills, into the writer's one scratch buffer
                       (writer_scratch=on; off: none)
  block_writer_buffers_built   buffers the block writers of a table built for record
                       keys: one per record added or refused (block_writer_scratch=off;
                       on: none)
  block_writer_buffers_reused  the same fills, into the one scratch buffer the table
                       writer keeps for its block writers (block_writer_scratch=on)
  delta_cache_*        lookups, hits, misses, adds, evictions, collisions, lru_steps,
                       deltas (applied), peak_bytes, of the tracked caches

The `allocs` slot of a lab result (bytes objects and buffers allocated in the
studied loops) is not here: per-record allocations are counted at malloc level by
the lab, outside the core.
"""
from __future__ import annotations

from typing import Any

COUNTER_NAMES = (
    "blocks_read",
    "blocks_set_up",
    "blocks_inflated",
    "block_iters_built",
    "seek_iter_copies",
    "restart_keys_decoded",
    "source_preads",
    "source_pread_bytes",
    "source_mmap_slices",
    "source_maps",
    "tables_opened",
    "tables_list_reads",
    "tables_list_stats",
    "packed_files_parsed",
    "packed_lines",
    "packed_bytes",
    "packed_getc_locked",
    "packed_getc_unlocked",
    "packed_buffer_reads",
    "packed_line_copies",
    "packed_maps",
    "packed_bsearch_seeks",
    "refname_format_checks",
    "refname_normalized",
    "refname_escape_scans",
    "pack_objects_read",
    "deletions_suppressed",
    "deletions_returned",
    "ref_iterators_built",
    "refname_store_checks",
    "library_name_checks",
    "loose_refs_written",
    "writer_buffers_built",
    "writer_buffers_reused",
    "block_writer_buffers_built",
    "block_writer_buffers_reused",
)

# the CacheStats fields summed over the tracked caches (delta_cache_<field>)
CACHE_FIELDS = ("lookups", "hits", "misses", "adds", "evictions", "collisions", "lru_steps",
                "deltas")


class Counters:
    """Plain integer attributes, one per name in COUNTER_NAMES."""

    __slots__ = (*COUNTER_NAMES, "_caches")

    def __init__(self) -> None:
        self._caches: list[Any] = []
        self.reset()

    def reset(self) -> None:
        for name in COUNTER_NAMES:
            setattr(self, name, 0)
        self._caches = []

    def track_cache(self, stats: Any) -> None:
        """Count a delta base cache's CacheStats in snapshot() until the next reset()."""
        self._caches.append(stats)

    def snapshot(self) -> dict[str, int]:
        out = {name: getattr(self, name) for name in COUNTER_NAMES}
        for f in CACHE_FIELDS:
            out[f"delta_cache_{f}"] = sum(getattr(s, f) for s in self._caches)
        out["delta_cache_peak_bytes"] = max((s.peak_bytes for s in self._caches), default=0)
        return out


WORK = Counters()


def reset() -> None:
    WORK.reset()


def snapshot() -> dict[str, int]:
    return WORK.snapshot()
