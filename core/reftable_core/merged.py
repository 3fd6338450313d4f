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

import linecache
import re
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
# One template, four generated generators (like block.py's record loops): they
# differ only in the lines the two flags are about. The priority queue's add and
# remove (pq.MergedIterPQueue's algorithm, with the queue's less-than) are
# expanded inline, because a Python method call per queue operation would cost
# more than the comparisons the pq_cmp flag is about. Markers:
#   ENTRY_KEY     what is prepared from the returned entry before the shadow loop
#   SAME_SUBITER  the same_subiter_skip check (or nothing)
#   SHADOWED      the condition under which the queue top is NOT shadowed
#   BYPASS        single_subiter_bypass: leave the queue once one sub-iterator is left
#   REMOVE_TOP    pq remove (the top was read as heap[0] just before)
#   ADD(r, i)     pq add of the entry (r, i)
_MERGE_LOOP = '''
def merge(heap, its, less, cmp, suppress):
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
        BYPASS
        rec = nxt(its[idx], None)
        if rec is not None:
            ADD(rec, idx)
        erec = entry[0]
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
                ADD(rec, tidx)
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
        if k < n and less(heap[k], child):
            j = k
            child = heap[k]
        if not less(child, last):
            break
        heap[i] = child
        i = j
        j = 2 * i + 1
    heap[i] = last"""

_ADD = """\
e = (REC, IDX)
i = len(heap)
append(e)
while i:
    j = (i - 1) >> 1
    parent = heap[j]
    if less(parent, e):
        break
    heap[i] = parent
    i = j
heap[i] = e"""

# single_subiter_bypass on (git 2.45): when the queue is empty after taking an
# entry, every other sub-iterator is exhausted; the entry's own sub-iterator
# yields strictly increasing keys, so its records need neither the queue nor
# the shadow check. Off (git at the time of seed 000): they go through both.
_BYPASS = {
    False: "",
    True: """\
if not heap:
    erec = entry[0]
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

_MERGE_VARIANTS_SRC: dict[tuple[bool, bool], dict[str, str]] = {
    # merged_cmp off: both keys are formatted into new buffers (the entry's once)
    # merged_cmp on:  the records' key fields are compared, no key built
    (False, False): {"ENTRY_KEY": "entry_key = cmp(erec)", "SAME_SUBITER": "",
                     "SHADOWED": "cmp(top[0]) > entry_key"},
    (False, True): {"ENTRY_KEY": "entry_key = cmp(erec)",
                    "SAME_SUBITER": "if tidx == idx:\n    break",
                    "SHADOWED": "cmp(top[0]) > entry_key"},
    (True, False): {"ENTRY_KEY": "", "SAME_SUBITER": "",
                    "SHADOWED": "cmp(top[0], erec) > 0"},
    (True, True): {"ENTRY_KEY": "", "SAME_SUBITER": "if tidx == idx:\n    break",
                   "SHADOWED": "cmp(top[0], erec) > 0"},
}

_ADD_CALL = re.compile(r"^( *)ADD\((\w+), (\w+)\)$")


def _expand(template: str, subst: dict[str, str]) -> str:
    """Replace each marker line by its (multi-line) text at the marker's indentation."""
    out: list[str] = []
    for line in template.splitlines():
        body = line.strip()
        indent = line[:len(line) - len(line.lstrip())]
        m = _ADD_CALL.match(line)
        if m:
            text = _ADD.replace("REC", m.group(2)).replace("IDX", m.group(3))
        elif body == "REMOVE_TOP":
            text = _REMOVE_TOP
        elif body in subst:
            text = subst[body]      # "" drops the marker line
        else:
            for marker, repl in subst.items():
                line = line.replace(marker, repl)
            out.append(line)
            continue
        out.extend(indent + t for t in text.splitlines())
    return "\n".join(out) + "\n"


_MERGE_FUNCS: dict[tuple[bool, bool, bool], Callable[..., Iterator[Any]]] = {}


def merge_function(flags: Flags) -> Callable[..., Iterator[Any]]:
    """The merge generator for flags.merged_cmp x same_subiter_skip x single_subiter_bypass.

    Signature: merge(heap, its, less, cmp, suppress) -> iterator of records, where
    heap is a MergedIterPQueue's list of (record, sub-iterator index) entries,
    its the sub-iterators, less the queue's less-than, cmp the shadow comparison
    (pq.FIELD_CMP or pq.FORMAT_KEY, by merged_cmp). The generated source is
    registered with linecache under "<reftable_core.merged merged_cmp=.. ...>".
    """
    k = (flags.merged_cmp, flags.same_subiter_skip, flags.single_subiter_bypass)
    fn = _MERGE_FUNCS.get(k)
    if fn is None:
        subst = dict(_MERGE_VARIANTS_SRC[k[:2]], BYPASS=_BYPASS[k[2]])
        src = _expand(_MERGE_LOOP, subst)
        on = {True: "on", False: "off"}
        filename = (f"<reftable_core.merged merged_cmp={on[k[0]]} same_subiter_skip={on[k[1]]} "
                    f"single_subiter_bypass={on[k[2]]}>")
        linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
        ns: dict[str, Any] = {}
        exec(compile(src, filename, "exec"), ns)
        fn = _MERGE_FUNCS[k] = ns["merge"]
    return fn


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
        self._variant = merge_function(flags)
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
        self._gen = self._variant(pq.heap, its, self._less, self._cmp, self._suppress)

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
