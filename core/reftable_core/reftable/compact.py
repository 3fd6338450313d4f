"""Compaction: which tables to merge (git's geometric rule) and the merge itself.

Contract: suggest_compaction_segment(sizes, factor) is git's
suggest_compaction_segment over the tables' sizes, oldest first (the sizes
without header and footer: compaction_sizes(file_sizes, hash_id)); it returns
the Segment [start, end) to merge, empty when the stack is geometric already.
merge_tables(readers, flags, hash_id, keep_deletions) returns the write
function that copies the merged refs and logs of those tables, oldest first,
into a TableWriter (git's stack_write_compact): with keep_deletions False
(the segment starts at the bottom of the stack) deletions and log tombstones
are dropped, otherwise they are kept to shadow the tables below. The locking
and the tables.list update are the stack's (stack.Stack.compact_range).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..flags import Flags
from .merged import MergedTable

DEFAULT_GEOMETRIC_FACTOR = 2

# header and footer sizes per format version (v1: SHA-1, v2: SHA-256)
_HEADER_SIZE = {1: 24, 2: 28}
_FOOTER_SIZE = {1: 68, 2: 72}


@dataclass(frozen=True)
class Segment:
    start: int = 0
    end: int = 0        # exclusive
    bytes: int = 0

    def __len__(self) -> int:
        return self.end - self.start


def suggest_compaction_segment(sizes: list[int], factor: int = DEFAULT_GEOMETRIC_FACTOR) -> Segment:
    """git's geometric compaction rule: the range of tables to merge (maybe empty).

    Walking from the newest table back, the segment ends at the first table whose
    predecessor is smaller than factor times its size; it extends back over every
    earlier table that is smaller than factor times the bytes accumulated so far.
    """
    factor = factor or DEFAULT_GEOMETRIC_FACTOR
    n = len(sizes)
    if n <= 1:
        return Segment()
    start = end = total = 0
    i = n - 1
    while i > 0:
        if sizes[i - 1] < sizes[i] * factor:
            end = i + 1
            total = sizes[i]
            break
        i -= 1
    if not end:
        return Segment()
    seg_bytes = 0
    while i > 0:
        curr = total
        total += sizes[i - 1]
        if sizes[i - 1] < curr * factor:
            start = i - 1
            seg_bytes = total
        i -= 1
    if not seg_bytes:
        return Segment()
    return Segment(start, end, seg_bytes)


def _version_of(hash_id: Any) -> int:
    return 2 if hash_id in ("sha256", 2, b"s256") else 1


def compaction_sizes(file_sizes: Sequence[int], hash_id: Any) -> list[int]:
    """The sizes git's rule compares: each file's size less header - 1 and footer."""
    version = _version_of(hash_id)
    overhead = _HEADER_SIZE[version] - 1 + _FOOTER_SIZE[version]
    return [size - overhead for size in file_sizes]


def merge_tables(readers: Sequence[Any], flags: Flags, hash_id: Any,
                 keep_deletions: bool) -> Callable[[Any], None]:
    """The write(writer) function that merges readers (oldest first) into one table."""
    mt = MergedTable(list(readers), flags, hash_id=hash_id, suppress_deletions=False)

    def write(wr: Any) -> None:
        for records, add in ((mt.refs, wr.add_ref), (mt.logs, wr.add_log)):
            it = records()
            it.seek(b"")
            for rec in it:
                if not keep_deletions and rec.value_type == 0:
                    continue
                add(rec)

    return write
