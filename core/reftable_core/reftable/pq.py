"""Binary-heap priority queue of merged-iterator entries (git's reftable/pq.c).

Contract: an entry is a tuple (record, subiter_index). The queue orders entries
by record key; on equal keys the entry from the NEWER table (higher index) comes
first, so the merged iterator sees the newest version of a key first. The
less-than function is chosen once, at construction (flag pq_cmp, seed 000 4/7,
pq_less in reftable/pq.c):
  off: two fresh buffers per comparison, each filled with a key, then compared
       ("struct strbuf ak = STRBUF_INIT; ... reftable_record_key(&a->rec, &ak);
       reftable_record_key(&b->rec, &bk); cmp = strbuf_cmp(&ak, &bk);
       strbuf_release(&ak); strbuf_release(&bk);");
  on:  compares key fields directly, no key built
       ("int cmp = reftable_record_cmp(&a->rec, &b->rec);").
Both: "if (cmp == 0) return a->index > b->index;".
Records are duck-typed: ref records have .refname, log records .refname and
.update_index (a log key sorts by refname, then by update_index descending).
add and remove are loops.pq_add and pq_remove, generated from the templates
(scripts/loop_templates.py ADD, REMOVE_TOP) that the merge loops expand inline with
these same comparisons: the algorithm is written once. The merged iterator
(merged.py) seeds a MergedIterPQueue, then its merge loop runs the queue.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..flags import Flags
from .loops import pq_add, pq_remove

Entry = list[Any]     # [record, sub-iterator index]
Less = Callable[[Entry, Entry], bool]

REF = "ref"
LOG = "log"


# -- less-than functions for heap entries ---------------------------------------

def _ref_less_fields(a: Entry, b: Entry) -> bool:
    an = a[0].refname
    bn = b[0].refname
    if an == bn:
        return a[1] > b[1]
    return an < bn


def _log_less_fields(a: Entry, b: Entry) -> bool:
    ra = a[0]
    rb = b[0]
    an = ra.refname
    bn = rb.refname
    if an == bn:
        au = ra.update_index
        bu = rb.update_index
        if au == bu:
            return a[1] > b[1]
        return au > bu
    return an < bn


# The "off" less-thans format both keys into new buffers, as git's pq_less did with
# two fresh strbufs (STRBUF_INIT, reftable_record_key, strbuf_release: an allocation
# and a copy per key per comparison). A ref key is its refname: bytes(refname) would
# return the same object in CPython, so the ref key is copied into a new bytearray;
# a log key is built by LogRecord.key() (refname NUL reversed update index).

def _ref_less_keys(a: Entry, b: Entry) -> bool:
    ak = bytearray(a[0].refname)
    bk = bytearray(b[0].refname)
    if ak == bk:
        return a[1] > b[1]
    return ak < bk


def _log_less_keys(a: Entry, b: Entry) -> bool:
    ak = a[0].key()
    bk = b[0].key()
    if ak == bk:
        return a[1] > b[1]
    return ak < bk


def make_less(kind: str, flags: Flags) -> Less:
    """The heap's less-than for records of kind "ref" or "log" under flags.pq_cmp."""
    if kind not in (REF, LOG):
        raise ValueError(f"unknown record kind {kind!r}")
    if not flags.pq_cmp:
        return _ref_less_keys if kind == REF else _log_less_keys
    return _ref_less_fields if kind == REF else _log_less_fields


class MergedIterPQueue:
    """A binary min-heap of (record, index) entries ordered by `less`."""

    __slots__ = ("heap", "less")

    def __init__(self, less: Less) -> None:
        self.heap: list[Entry] = []
        self.less = less

    def __len__(self) -> int:
        return len(self.heap)

    def top(self) -> Entry:
        return self.heap[0]

    def add(self, entry: Entry) -> None:
        pq_add(self, entry)             # generated, see the module doc

    def remove(self) -> Entry:
        return pq_remove(self)
