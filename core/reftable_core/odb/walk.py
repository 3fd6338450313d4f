"""Walks mirroring seed 002's workloads: `git log --raw` and `git log -S<needle>`.

Contract:
  walk_commits(store, include, exclude=(), max_count=None) -> iterator of
      (commit_id, tree_id, parent_ids): the commits `git log --first-parent`
      shows for the commit-ishes include (one id or several) minus the ancestors
      of exclude, at most max_count of them, in git's order (committer date,
      newest first; a single line of first parents in walk order). A commit that
      is its own ancestor is shown once; a commit whose header does not parse
      raises FormatError "bad object <id>".
  walk_log_raw(store, start, exclude=(), max_count=None) -> iterator of
      (commit_id, [Change, ...]): those commits, each tree diffed recursively
      against its first parent's tree (the root commit against the empty tree,
      as log.showRoot=true does); reads commits and trees only. A tree deeper
      than MAX_TREE_DEPTH (git's core.maxTreeDepth) raises FormatError
      "exceeded maximum allowed tree depth", as git dies.
  walk_log_S(store, start, needle, exclude=(), max_count=None) -> matching ids
      the same walk, plus for every changed path the blobs on both sides; a commit
      matches when the needle's (non-overlapping) occurrence count differs between
      the two sides of any changed path (git's pickaxe -S, no rename detection).
  resolve_start(store, start_ref, resolve_ref) -> the id a walk starts from:
      start_ref is any revision odb.revision takes (None: HEAD); NotExistError
      when unknown.
This module reads no refs: resolve_ref (name -> oid or None) comes from the
caller's ref store (the lab builds it from reftable_core.repo.open_repo(...).refs).
Changes come in git's diff-tree order; format_raw() renders one as
`git log --raw --no-abbrev`, its path quoted by quote_path() (git's
quote_c_style under core.quotePath). Rename detection is not done: compare with
git's `--no-renames`.
"""
from __future__ import annotations

import heapq
import re
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from ..cython_shim import cython     # the Cython build compiles this as `import cython`
from ..errors import FormatError, NotExistError
from .revision import RefResolver, commit_date, parse_commit, resolve_revision
from .store import ObjectStore
from .tree import S_IFGITLINK, S_IFMT, decode_entry, split_tree


class Change(NamedTuple):
    old_mode: int
    new_mode: int
    old_id: bytes | None
    new_id: bytes | None
    status: str          # A, D, M, T
    path: bytes


MAX_TREE_DEPTH = 2048        # git's core.maxTreeDepth default (not Windows)


class TreeDiff:
    """Recursive diff of two trees read through a store (git diff-tree -r order).

    The recursion is an explicit stack, at most MAX_TREE_DEPTH trees below the
    root (FormatError "exceeded maximum allowed tree depth", as git dies), so a
    deep or self-containing tree never reaches Python's recursion limit.

    Every tree is read from the store each time a diff needs it (the object
    store's work, delta base cache included, is git's); what is kept is the
    split entry list of the trees the previous diff read, by id: a log's next
    diff reads most of them again (its new tree is the next one's old tree),
    and an id's entries never change, so they are not split twice.

    The two entry lists are walked in step as git's diff_tree walks them; an
    entry is kept as its raw bytes (tree.split_tree), so the common case, the
    same entry on both sides, is one bytes comparison, and only the entries
    that differ are decoded (tree.decode_entry) and compared by name."""

    def __init__(self, store: ObjectStore) -> None:
        self.store = store
        self.hash_len = store.hash_len
        self._parsed: dict[bytes, list[bytes]] = {}
        self._last: dict[bytes, list[bytes]] = {}

    def _entries(self, oid: bytes | None) -> list[bytes]:
        if oid is None:
            return []
        typ, data = self.store.read_raw(oid)
        if typ != 2:
            raise FormatError(f"{oid.hex()} is not a tree")
        entries = self._last.get(oid)
        if entries is None:
            entries = split_tree(data, self.hash_len)
        self._parsed[oid] = entries
        return entries

    @cython.locals(stack="list", frame="list", a="list", b="list", i="Py_ssize_t",
                   j="Py_ssize_t", na="Py_ssize_t", nb="Py_ssize_t", side="int")
    def diff(self, old: bytes | None, new: bytes | None, prefix: bytes = b"",
             out: list[Change] | None = None) -> list[Change]:
        self._last, self._parsed = self._parsed, {}
        if out is None:
            out = []
        append = out.append
        entries = self._entries
        # a frame: [old entries, new entries, i, j, prefix]
        stack: list[list] = [[entries(old), entries(new), 0, 0, prefix]]
        while stack:
            frame = stack[-1]
            a, b, i, j, prefix = frame
            na, nb = len(a), len(b)
            down: tuple[bytes | None, bytes | None, bytes] | None = None
            while True:
                while i < na and j < nb and a[i] == b[j]:     # the same entry: no change
                    i += 1
                    j += 1
                if i < na:
                    ka, ma, oa, da = decode_entry(a[i])
                    if j < nb:
                        kb, mb, ob, db = decode_entry(b[j])
                        side = -1 if ka < kb else 1 if kb < ka else 0
                    else:
                        side = -1
                elif j < nb:
                    kb, mb, ob, db = decode_entry(b[j])
                    side = 1
                else:
                    break
                if side < 0:                        # only in the old tree
                    i += 1
                    if da:
                        down = (oa, None, prefix + ka)
                        break
                    append(Change(ma, 0, oa, None, "D", prefix + ka))
                elif side > 0:                      # only in the new tree
                    j += 1
                    if db:
                        down = (None, ob, prefix + kb)
                        break
                    append(Change(0, mb, None, ob, "A", prefix + kb))
                else:
                    i += 1
                    j += 1
                    if oa == ob and ma == mb:       # differently written, the same entry
                        continue
                    if da:          # both trees (same key implies same kind)
                        down = (oa, ob, prefix + ka)
                        break
                    status = "M" if (ma & S_IFMT) == (mb & S_IFMT) else "T"
                    append(Change(ma, mb, oa, ob, status, prefix + ka))
            if down is None:
                stack.pop()
                continue
            frame[2] = i
            frame[3] = j
            if len(stack) > MAX_TREE_DEPTH:
                raise FormatError("exceeded maximum allowed tree depth")
            stack.append([entries(down[0]), entries(down[1]), 0, 0, down[2]])
        return out


class _Commits:
    """Parsed commits (tree, parents) by id, the last few kept (a walk reads each
    commit twice: as a parent to diff against, then as the next commit)."""

    def __init__(self, store: ObjectStore) -> None:
        self.read_raw = store.read_raw
        self.memo: dict[bytes, tuple[bytes, list[bytes], bytes]] = {}

    def get(self, oid: bytes) -> tuple[bytes, list[bytes], bytes]:
        """(tree, parents, raw data); FormatError "bad object <id>" (git's words)
        when oid is no commit or its header does not parse."""
        hit = self.memo.get(oid)
        if hit is not None:
            return hit
        typ, data = self.read_raw(oid)
        if typ != 1:
            raise FormatError(f"object {oid.hex()} is a {_TYPE_NAMES.get(typ, typ)}, "
                              "not a commit")
        try:
            tree, parents = parse_commit(data)
        except FormatError:
            raise FormatError(f"bad object {oid.hex()}") from None
        if len(self.memo) >= 8:
            self.memo.clear()
        hit = self.memo[oid] = (tree, parents, data)
        return hit


_TYPE_NAMES = {1: "commit", 2: "tree", 3: "blob", 4: "tag"}


def walk_commits(store: ObjectStore, include: bytes | Sequence[bytes],
                 exclude: Sequence[bytes] = (), max_count: int | None = None,
                 commits: _Commits | None = None) -> Iterator[tuple[bytes, bytes, list[bytes]]]:
    """(id, tree, parents) of each commit `git log --first-parent include ^exclude
    [-n max_count]` shows, in its order: newest committer date first, ties in the
    order the commits were queued. Ancestors of an excluded commit (all parents)
    are not shown; a commit is shown once, even if it is its own ancestor."""
    if isinstance(include, bytes):
        include = [include]
    if max_count is not None and max_count < 0:
        max_count = None
    if max_count == 0:
        return
    commits = commits or _Commits(store)
    get = commits.get
    tips = [store.peel(o) for o in include]
    shown = 0
    if len(tips) == 1 and not exclude:       # one line of first parents: no dates needed
        oid: bytes | None = tips[0]
        seen = set()
        while oid is not None and oid not in seen:
            seen.add(oid)
            tree, parents, _ = get(oid)
            yield oid, tree, parents
            shown += 1
            if shown == max_count:
                return
            oid = parents[0] if parents else None
        return
    hidden: set[bytes] = set()
    todo = [store.peel(o) for o in exclude]
    while todo:
        o = todo.pop()
        if o not in hidden:
            hidden.add(o)
            todo.extend(get(o)[1])
    queue: list[tuple[int, int, bytes]] = []
    queued: set[bytes] = set()
    count = 0
    for oid in tips:
        if oid not in queued:
            queued.add(oid)
            heapq.heappush(queue, (-commit_date(get(oid)[2]), count, oid))
            count += 1
    while queue:
        oid = heapq.heappop(queue)[2]
        if oid in hidden:
            continue
        tree, parents, _ = get(oid)
        yield oid, tree, parents
        shown += 1
        if shown == max_count:
            return
        if parents and parents[0] not in queued:
            p = parents[0]
            queued.add(p)
            heapq.heappush(queue, (-commit_date(get(p)[2]), count, p))
            count += 1


def walk_log_raw(store: ObjectStore, start: bytes | Sequence[bytes],
                 exclude: Sequence[bytes] = (), max_count: int | None = None
                 ) -> Iterator[tuple[bytes, list[Change]]]:
    differ = TreeDiff(store)
    commits = _Commits(store)
    for oid, tree, parents in walk_commits(store, start, exclude, max_count, commits):
        yield oid, differ.diff(commits.get(parents[0])[0] if parents else None, tree)


def count_needle(store: ObjectStore, mode: int, oid: bytes | None, needle: bytes) -> int:
    if oid is None:
        return 0
    if mode & S_IFMT == S_IFGITLINK:
        return (b"Subproject commit " + oid.hex().encode() + b"\n").count(needle)
    return store.read_raw(oid)[1].count(needle)


def walk_log_S(store: ObjectStore, start: bytes | Sequence[bytes], needle: bytes,
               exclude: Sequence[bytes] = (), max_count: int | None = None) -> Iterator[bytes]:
    """max_count limits the commits shown (git applies -n after the -S filter)."""
    shown = 0
    if max_count is not None and max_count < 0:
        max_count = None
    if max_count == 0:
        return
    for oid, changes in walk_log_raw(store, start, exclude):
        for ch in changes:
            c1 = count_needle(store, ch.old_mode, ch.old_id, needle)
            c2 = count_needle(store, ch.new_mode, ch.new_id, needle)
            if c1 != c2:
                yield oid
                shown += 1
                break
        if shown == max_count:
            return


# git's quote_c_style: these bytes are written as \<letter>; other control bytes,
# DEL and (with core.quotePath, the default) bytes >= 0x80 as \<3 octal digits>
_C_ESCAPES = {7: b"\\a", 8: b"\\b", 9: b"\\t", 10: b"\\n", 11: b"\\v", 12: b"\\f",
              13: b"\\r", 34: b'\\"', 92: b"\\\\"}


# a byte that makes a path quoted: under core.quotePath (first) and without it
_NEEDS_QUOTING = (re.compile(rb'[\x00-\x1f"\\\x7f-\xff]'), re.compile(rb'[\x00-\x1f"\\\x7f]'))


def quote_path(name: bytes, quote_high: bool = True) -> bytes:
    """A path as git prints it: as is when no byte needs quoting, else C-quoted in
    double quotes (quote_high=False is core.quotePath=false: bytes >= 0x80 as is)."""
    if _NEEDS_QUOTING[0 if quote_high else 1].search(name) is None:
        return name
    limit = 0x80 if quote_high else 0x100
    out = bytearray(b'"')
    for c in name:
        if c in _C_ESCAPES:
            out += _C_ESCAPES[c]
        elif c < 0x20 or c == 127 or c >= limit:
            out += b"\\%03o" % c
        else:
            out.append(c)
    out += b'"'
    return bytes(out)


def format_raw(ch: Change, hash_len: int, quote_high: bool = True) -> str:
    """One `git log --raw --no-abbrev` line; the path quoted as quote_path does
    (non-UTF-8 bytes come back as surrogate escapes: encode with surrogateescape)."""
    zero = "0" * (2 * hash_len)
    path = quote_path(ch.path, quote_high).decode("utf-8", "surrogateescape")
    return (f":{ch.old_mode:06o} {ch.new_mode:06o} "
            f"{ch.old_id.hex() if ch.old_id else zero} {ch.new_id.hex() if ch.new_id else zero} "
            f"{ch.status}\t{path}")


# -- the start of a walk ---------------------------------------------------------
def resolve_start(store: ObjectStore, start_ref: str | bytes | None,
                  resolve_ref: RefResolver) -> bytes:
    """The commit-ish a walk starts from: a raw id, or any revision resolve_revision
    takes (hex id, ref name by git's dwim rules, abbreviated id, suffixes); None
    means HEAD. resolve_ref maps a full ref name to its id (the caller's ref store)."""
    if isinstance(start_ref, bytes) and len(start_ref) == store.hash_len:
        return start_ref
    name = (start_ref.decode() if isinstance(start_ref, bytes) else start_ref) or "HEAD"
    oid = resolve_revision(name.encode("utf-8", "surrogateescape"), resolve_ref,
                           lambda: store, store.hash_len)
    if oid is None:
        raise NotExistError(f"unknown revision {name!r}")
    return oid
