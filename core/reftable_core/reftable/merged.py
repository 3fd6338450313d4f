"""Merged view over a stack of tables (git's reftable/merged.c).

Contract: MergedTable(readers, flags) takes tables oldest first and offers the
same interface as one table: .hash_id, .min_update_index, .max_update_index,
.refs() / .logs() returning iterators with .seek(key), .seek_ref(name) (and
.seek_log(name)). Iteration yields records in key order; on equal keys the
newest table wins and the shadowed records of older tables are dropped.
Deletions (value_type 0) are suppressed for readers; compaction passes
suppress_deletions=False to keep them.

Flags, each picking one iteration function (merge_function, generated from one
template with the priority queue's add/remove expanded inline) when an iterator
is built:
  merged_cmp off: dropping shadowed records compares freshly built keys
                  (entry.key() once, top.key() per comparison); on: field-wise.
  same_subiter_skip off: always compares the queue top with the returned entry;
                  on: stops when the top came from the same sub-iterator, since a
                  sub-iterator yields strictly increasing keys (seed 000 3/7).
  single_subiter_bypass off: every record goes through the queue (git at the
                  time of seed 000); on: once the queue is empty, the one
                  sub-iterator left is read directly (git 2.45).
  pq_cmp: the priority queue's less-than (see pq.py).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from .basics import MAX_U64
from .codegen import define
from ..errors import FormatError
from ..flags import Flags
from .pq import LOG, REF, MergedIterPQueue, make_less
from .record import log_key

# -- the merge loops: "next entry, dropping shadowed records" ------------------------
# One template; a generator is generated per record kind and per value of the four
# flags that act here (like block.py's record loops), so the variants differ only
# in the lines the flags are about and no flag is tested per record. The priority
# queue's add and remove (pq.MergedIterPQueue's algorithm) and both comparisons
# are expanded inline: in CPython a function call per comparison would cost more
# than the key building the flags are about. Markers:
#   LESS(a, b)    the queue's less-than of entries a, b (pq_cmp; pq.make_less)
#   ENTRY_KEY     what is prepared from the returned record before the shadow loop
#   SHADOWED      true when the queue top's key is greater (not shadowed; merged_cmp)
#   SAME_SUBITER  the same_subiter_skip check (or nothing)
#   BYPASS        single_subiter_bypass: leave the queue once one sub-iterator is left
#   REMOVE_TOP    pq remove (the top was read as heap[0] just before)
#   ADD(e)        pq add of entry e: a [record, sub-iterator index] list, reused
#                 for the sub-iterator's next record (no entry built per record)
_MERGE_LOOP = '''
def merge(heap, its, suppress):
    """Yield the merged records: pop the smallest entry, advance its sub-iterator,
    drop every queued entry with a key not greater than it (older versions of the
    same key), skip deletions if suppress."""
    nxt = next
    pop = heap.pop
    append = heap.append
    while heap:
        entry = heap[0]
        REMOVE_TOP
        idx = entry[1]
        erec = entry[0]
        BYPASS
        rec = nxt(its[idx], None)
        if rec is not None:
            entry[0] = rec
            ADD(entry)
        ENTRY_KEY
        while heap:
            top = heap[0]
            tidx = top[1]
            SAME_SUBITER
            if SHADOWED:
                break
            REMOVE_TOP
            rec = nxt(its[tidx], None)
            if rec is not None:
                top[0] = rec
                ADD(top)
        if suppress and erec.value_type == 0:
            continue
        yield erec
'''

_REMOVE_TOP = """\
last = pop()
n = len(heap)
if n:
    i = 0
    j = 1
    while j < n:
        child = heap[j]
        k = j + 1
        if k < n:
            right = heap[k]
            if LESS(right, child):
                j = k
                child = right
        if not LESS(child, last):
            break
        heap[i] = child
        i = j
        j = 2 * i + 1
    heap[i] = last"""

_ADD = """\
e = ENTRY
i = len(heap)
append(e)
while i:
    j = (i - 1) >> 1
    parent = heap[j]
    if LESS(parent, e):
        break
    heap[i] = parent
    i = j
heap[i] = e"""

# pq_cmp: on equal keys the entry of the newer table (higher index) is smaller.
#   off: both keys are formatted into new buffers (git's pq_less with two strbufs;
#        a ref key is copied into a bytearray: bytes(refname) would be the same object)
#   on:  the key fields are compared, no key built
_LESS = {
    (REF, False): "((ak := bytearray(A[0].refname)) < (bk := bytearray(B[0].refname))"
                  " or (ak == bk and A[1] > B[1]))",
    (REF, True): "((an := A[0].refname) < (bn := B[0].refname) or (an == bn and A[1] > B[1]))",
    (LOG, False): "((ak := A[0].key()) < (bk := B[0].key()) or (ak == bk and A[1] > B[1]))",
    (LOG, True): "((an := A[0].refname) < (bn := B[0].refname) or (an == bn and"
                 " ((au := A[0].update_index) > (bu := B[0].update_index)"
                 " or (au == bu and A[1] > B[1]))))",
}

# merged_cmp: is the queue top's key greater than the returned record's?
#   off: the returned record's key is formatted once, the top's per comparison
#   on:  field-wise (a log key sorts by refname, then update_index descending)
_SHADOW = {
    (REF, False): ("entry_key = bytearray(erec.refname)", "bytearray(top[0].refname) > entry_key"),
    (REF, True): ("", "top[0].refname > erec.refname"),
    (LOG, False): ("entry_key = erec.key()", "top[0].key() > entry_key"),
    (LOG, True): ("", "((tn := top[0].refname) > (en := erec.refname) or"
                      " (tn == en and top[0].update_index < erec.update_index))"),
}

_SAME_SUBITER = {False: "", True: "if tidx == idx:\n    break"}

# single_subiter_bypass on (git 2.45): when the queue is empty after taking an
# entry, every other sub-iterator is exhausted; the entry's own sub-iterator
# yields strictly increasing keys, so its records need neither the queue nor
# the shadow check. Off (git at the time of seed 000): they go through both.
_BYPASS = {
    False: "",
    True: """\
if not heap:
    if not suppress:
        yield erec
        yield from its[idx]
        return
    if erec.value_type:
        yield erec
    for erec in its[idx]:
        if erec.value_type:
            yield erec
    return""",
}

_ADD_CALL = re.compile(r"^( *)ADD\((\w+)\)$")
_LESS_CALL = re.compile(r"LESS\((\w+), (\w+)\)")


def _expand(template: str, subst: dict[str, str], less: str) -> str:
    """Replace each marker line by its (multi-line) text at the marker's
    indentation ("" drops the line), then LESS(a, b) by the less-than expression."""
    out: list[str] = []
    for line in template.splitlines():
        body = line.strip()
        indent = line[:len(line) - len(line.lstrip())]
        m = _ADD_CALL.match(line)
        if m:
            text = _ADD.replace("ENTRY", m.group(2))
        elif body == "REMOVE_TOP":
            text = _REMOVE_TOP
        elif body in subst:
            text = subst[body]
        else:
            for marker, repl in subst.items():
                line = line.replace(marker, repl)
            out.append(line)
            continue
        out.extend(indent + t for t in text.splitlines())
    src = "\n".join(out) + "\n"
    return _LESS_CALL.sub(lambda m: less.replace("A", m.group(1)).replace("B", m.group(2)), src)


_MERGE_FUNCS: dict[tuple[str, bool, bool, bool, bool], Callable[..., Iterator[Any]]] = {}


def merge_function(flags: Flags, kind: str = REF) -> Callable[..., Iterator[Any]]:
    """The merge generator for records of kind "ref" or "log" under flags
    (merged_cmp, same_subiter_skip, single_subiter_bypass, pq_cmp).

    Signature: merge(heap, its, suppress) -> iterator of records, where heap is
    a MergedIterPQueue's list of [record, sub-iterator index] entries (a valid
    heap under pq.make_less(kind, flags)) and its the sub-iterators. The source
    is registered with linecache under "<reftable_core.reftable.merged ref merged_cmp=..>"
    so tracebacks and line profilers show it.
    """
    if kind not in (REF, LOG):
        raise ValueError(f"unknown record kind {kind!r}")
    k = (kind, flags.merged_cmp, flags.same_subiter_skip, flags.single_subiter_bypass,
         flags.pq_cmp)
    fn = _MERGE_FUNCS.get(k)
    if fn is None:
        entry_key, shadowed = _SHADOW[(kind, k[1])]
        subst = {"ENTRY_KEY": entry_key, "SHADOWED": shadowed,
                 "SAME_SUBITER": _SAME_SUBITER[k[2]], "BYPASS": _BYPASS[k[3]]}
        src = _expand(_MERGE_LOOP, subst, _LESS[(kind, k[4])])
        on = {True: "on", False: "off"}
        filename = (f"<reftable_core.reftable.merged {kind} merged_cmp={on[k[1]]} "
                    f"same_subiter_skip={on[k[2]]} single_subiter_bypass={on[k[3]]} "
                    f"pq_cmp={on[k[4]]}>")
        fn = _MERGE_FUNCS[k] = define(src, filename, "merge")
    return fn


def _empty() -> Iterator[Any]:
    return iter(())


class MergedIter:
    """Iterator over the merged records of one kind ("ref" or "log")."""

    __slots__ = ("_gen", "_kind", "_less", "_subs", "_suppress", "_variant")

    def __init__(self, subs: list[Any], kind: str, flags: Flags, suppress: bool) -> None:
        self._subs = subs
        self._kind = kind
        self._suppress = suppress
        self._less = make_less(kind, flags)
        self._variant = merge_function(flags, kind)
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
                pq.add([rec, i])
        self._gen = self._variant(pq.heap, its, self._suppress)

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
