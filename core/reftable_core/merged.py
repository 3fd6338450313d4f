"""Merged view over a stack of tables (git's reftable/merged.c).

Contract: MergedTable(readers, flags) takes tables oldest first and offers the
same interface as one table: .hash_id, .min_update_index, .max_update_index,
.refs() / .logs() returning iterators with .seek(key), .seek_ref(name) (and
.seek_log(name)). Iteration yields records in key order; on equal keys the
newest table wins and the shadowed records of older tables are dropped.
Deletions (value_type 0) are suppressed for readers; compaction passes
suppress_deletions=False to keep them.

Flags, each picking one iteration function when an iterator is seeked:
  merged_cmp off: dropping shadowed records compares freshly built keys
                  (entry.key() once, top.key() per comparison); on: field-wise.
  same_subiter_skip off: always compares the queue top with the returned entry;
                  on: stops when the top came from the same sub-iterator, since a
                  sub-iterator yields strictly increasing keys (seed 000 3/7).
  pq_cmp: the priority queue's less-than (see pq.py).
This is the algorithm of git at the time of seed 000 (no single-subiter fast path).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from .errors import FormatError
from .flags import Flags
from .pq import FIELD_CMP, FORMAT_KEY, LOG, REF, MergedIterPQueue, make_less

MAX_U64 = (1 << 64) - 1


def log_key(refname: bytes, update_index: int = MAX_U64) -> bytes:
    """The key of a log record: refname, NUL, 64-bit big-endian reversed update index."""
    return refname + b"\0" + (MAX_U64 - update_index).to_bytes(8, "big")


# -- the four variants of "next entry, dropping shadowed records" ----------------
# Each is a generator over (pq, sub-iterators); they differ only in the shadow loop.
# The "keys" variants get the key formatter (pq.FORMAT_KEY), the "fields" variants
# the field-wise comparison (pq.FIELD_CMP).

def _merge_keys_noskip(pq: MergedIterPQueue, its: list[Iterator[Any]],
                       fmt: Callable[[Any], Any], suppress: bool) -> Iterator[Any]:
    heap = pq.heap
    remove = pq.remove
    add = pq.add
    nxt = next
    while heap:
        entry = remove()
        idx = entry[1]
        rec = nxt(its[idx], None)
        if rec is not None:
            add((rec, idx))
        erec = entry[0]
        entry_key = fmt(erec)
        while heap:
            top = heap[0]
            if fmt(top[0]) > entry_key:
                break
            remove()
            tidx = top[1]
            rec = nxt(its[tidx], None)
            if rec is not None:
                add((rec, tidx))
        if suppress and erec.value_type == 0:
            continue
        yield erec


def _merge_keys_skip(pq: MergedIterPQueue, its: list[Iterator[Any]],
                     fmt: Callable[[Any], Any], suppress: bool) -> Iterator[Any]:
    heap = pq.heap
    remove = pq.remove
    add = pq.add
    nxt = next
    while heap:
        entry = remove()
        idx = entry[1]
        rec = nxt(its[idx], None)
        if rec is not None:
            add((rec, idx))
        erec = entry[0]
        entry_key = fmt(erec)
        while heap:
            top = heap[0]
            tidx = top[1]
            if tidx == idx:
                break
            if fmt(top[0]) > entry_key:
                break
            remove()
            rec = nxt(its[tidx], None)
            if rec is not None:
                add((rec, tidx))
        if suppress and erec.value_type == 0:
            continue
        yield erec


def _merge_fields_noskip(pq: MergedIterPQueue, its: list[Iterator[Any]],
                         cmp: Callable[[Any, Any], int], suppress: bool) -> Iterator[Any]:
    heap = pq.heap
    remove = pq.remove
    add = pq.add
    nxt = next
    while heap:
        entry = remove()
        idx = entry[1]
        rec = nxt(its[idx], None)
        if rec is not None:
            add((rec, idx))
        erec = entry[0]
        while heap:
            top = heap[0]
            if cmp(top[0], erec) > 0:
                break
            remove()
            tidx = top[1]
            rec = nxt(its[tidx], None)
            if rec is not None:
                add((rec, tidx))
        if suppress and erec.value_type == 0:
            continue
        yield erec


def _merge_fields_skip(pq: MergedIterPQueue, its: list[Iterator[Any]],
                       cmp: Callable[[Any, Any], int], suppress: bool) -> Iterator[Any]:
    heap = pq.heap
    remove = pq.remove
    add = pq.add
    nxt = next
    while heap:
        entry = remove()
        idx = entry[1]
        rec = nxt(its[idx], None)
        if rec is not None:
            add((rec, idx))
        erec = entry[0]
        while heap:
            top = heap[0]
            tidx = top[1]
            if tidx == idx:
                break
            if cmp(top[0], erec) > 0:
                break
            remove()
            rec = nxt(its[tidx], None)
            if rec is not None:
                add((rec, tidx))
        if suppress and erec.value_type == 0:
            continue
        yield erec


_MERGE_VARIANTS: dict[tuple[bool, bool], Callable[..., Iterator[Any]]] = {
    (False, False): _merge_keys_noskip,
    (False, True): _merge_keys_skip,
    (True, False): _merge_fields_noskip,
    (True, True): _merge_fields_skip,
}


def _empty() -> Iterator[Any]:
    return iter(())


class MergedIter:
    """Iterator over the merged records of one kind ("ref" or "log")."""

    __slots__ = ("_cmp", "_gen", "_kind", "_less", "_subs", "_suppress", "_variant")

    def __init__(self, subs: list[Any], kind: str, flags: Flags, suppress: bool) -> None:
        self._subs = subs
        self._kind = kind
        self._suppress = suppress
        self._less = make_less(kind, flags)
        self._cmp = FIELD_CMP[kind] if flags.merged_cmp else FORMAT_KEY[kind]
        self._variant = _MERGE_VARIANTS[(flags.merged_cmp, flags.same_subiter_skip)]
        self._gen: Iterator[Any] | None = None

    def seek(self, key: bytes) -> None:
        """Position every sub-iterator at the first record with key >= key."""
        pq = MergedIterPQueue(self._less)
        its: list[Iterator[Any]] = []
        for i, sub in enumerate(self._subs):
            sub.seek(key)
            it = iter(sub)
            its.append(it)
            rec = next(it, None)
            if rec is not None:
                pq.add((rec, i))
        self._gen = self._variant(pq, its, self._cmp, self._suppress)

    def seek_ref(self, name: bytes) -> None:
        self.seek(name)

    def seek_log(self, name: bytes, update_index: int = MAX_U64) -> None:
        self.seek(log_key(name, update_index))

    def __iter__(self) -> Iterator[Any]:
        if self._gen is None:
            self.seek(b"")
        assert self._gen is not None
        return self._gen

    def __next__(self) -> Any:
        if self._gen is None:
            self.seek(b"")
        assert self._gen is not None
        return next(self._gen)

    def close(self) -> None:
        self._gen = None
        for sub in self._subs:
            close = getattr(sub, "close", None)
            if close is not None:
                close()


class MergedTable:
    """N tables (oldest first) seen as one; newest wins on equal keys."""

    def __init__(self, readers: Sequence[Any], flags: Flags | None = None,
                 hash_id: Any = None, suppress_deletions: bool = True) -> None:
        self.readers = list(readers)
        self.flags = flags or Flags()
        self.suppress_deletions = suppress_deletions
        if hash_id is None and self.readers:
            hash_id = self.readers[0].hash_id
        for r in self.readers:
            if r.hash_id != hash_id:
                raise FormatError(f"table hash {r.hash_id!r} differs from stack hash {hash_id!r}",
                                  getattr(r, "name", None))
        self.hash_id = hash_id
        if self.readers:
            self.min_update_index = min(r.min_update_index for r in self.readers)
            self.max_update_index = max(r.max_update_index for r in self.readers)
        else:
            self.min_update_index = 0
            self.max_update_index = 0

    def refs(self) -> MergedIter:
        return MergedIter([r.refs() for r in self.readers], REF, self.flags,
                          self.suppress_deletions)

    def logs(self) -> MergedIter:
        return MergedIter([r.logs() for r in self.readers], LOG, self.flags,
                          self.suppress_deletions)

    # -- conveniences over the iterators ----------------------------------------
    def read_ref(self, name: bytes) -> Any | None:
        """The newest live record of ref `name`, or None.

        A point lookup: the tables are asked newest first for an exact match
        (what the merged iterator would return first for this key, without
        setting up a queue); a deletion in a newer table hides older values.
        """
        for r in reversed(self.readers):
            rec = r.seek_ref(name)
            if rec is not None:
                if rec.value_type == 0 and self.suppress_deletions:
                    return None
                return rec
        return None

    def iter_refs(self, prefix: bytes = b"") -> Iterator[Any]:
        """Live ref records whose name starts with prefix, in name order."""
        it = self.refs()
        it.seek_ref(prefix)
        for rec in it:
            if not rec.refname.startswith(prefix):
                break
            yield rec

    def iter_logs(self, name: bytes) -> Iterator[Any]:
        """Log records of ref `name`, newest first."""
        it = self.logs()
        it.seek_log(name)
        for rec in it:
            if rec.refname != name:
                break
            yield rec
