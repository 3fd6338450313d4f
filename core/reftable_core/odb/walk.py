"""Walks mirroring seed 002's workloads: `git log --raw` and `git log -S<needle>`.

Contract:
  walk_log_raw(store, start) -> iterator of (commit_id, [Change, ...])
      first-parent walk from the commit-ish start (an id); each commit's tree is
      diffed recursively against its first parent's tree (the root commit against
      the empty tree, as log.showRoot=true does); reads commits and trees only.
  walk_log_S(store, start, needle) -> iterator of matching commit ids
      the same walk, plus for every changed path the blobs on both sides; a commit
      matches when the needle's (non-overlapping) occurrence count differs between
      the two sides of any changed path (git's pickaxe -S, no rename detection).
  resolve_start(store, start_ref, resolve_ref) -> the id a walk starts from:
      start_ref is any revision odb.revision takes (None: HEAD); NotExistError
      when unknown.
This module reads no refs: resolve_ref (name -> oid or None) comes from the
caller's ref store (the lab builds it from reftable_core.repo.open_repo(...).refs).
Changes come in git's diff-tree order; format_raw() renders one as
`git log --raw --no-abbrev`. Rename detection is not done: compare with git's
`--no-renames`.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from ..errors import FormatError, NotExistError
from .revision import RefResolver, parse_commit, resolve_revision
from .store import ObjectStore

S_IFMT = 0o170000
S_IFDIR = 0o040000
S_IFLNK = 0o120000
S_IFGITLINK = 0o160000


class Change(NamedTuple):
    old_mode: int
    new_mode: int
    old_id: bytes | None
    new_id: bytes | None
    status: str          # A, D, M, T
    path: bytes


def canon_mode(mode: int) -> int:
    t = mode & S_IFMT
    if t == 0o100000:
        return 0o100755 if mode & 0o100 else 0o100644
    if t in (S_IFDIR, S_IFLNK, S_IFGITLINK):
        return t
    return S_IFGITLINK if mode == S_IFGITLINK else mode


def parse_tree(data: bytes, hash_len: int) -> list[tuple[bytes, int, bytes, bool]]:
    """[(sort_key, mode, oid, is_dir)] in tree order; the key is name (+ b'/' for trees)."""
    out = []
    pos = 0
    n = len(data)
    find = data.find
    while pos < n:
        sp = find(b" ", pos)
        nul = find(b"\0", sp + 1)
        if sp < 0 or nul < 0 or nul + 1 + hash_len > n:
            raise FormatError("malformed tree entry", offset=pos)
        try:
            mode = int(data[pos:sp], 8)
        except ValueError:
            raise FormatError("bad tree entry mode", offset=pos) from None
        name = data[sp + 1:nul]
        pos = nul + 1 + hash_len
        isdir = mode & S_IFMT == S_IFDIR
        out.append((name + b"/" if isdir else name, canon_mode(mode), data[nul + 1:pos], isdir))
    return out


class TreeDiff:
    """Recursive diff of two trees read through a store (git diff-tree -r order)."""

    def __init__(self, store: ObjectStore) -> None:
        self.store = store
        self.hash_len = store.hash_len

    def _entries(self, oid: bytes | None) -> list[tuple[bytes, int, bytes, bool]]:
        if oid is None:
            return []
        typ, data = self.store.read_raw(oid)
        if typ != 2:
            raise FormatError(f"{oid.hex()} is not a tree")
        return parse_tree(data, self.hash_len)

    def diff(self, old: bytes | None, new: bytes | None, prefix: bytes = b"",
             out: list[Change] | None = None) -> list[Change]:
        if out is None:
            out = []
        a = self._entries(old)
        b = self._entries(new)
        i = j = 0
        na, nb = len(a), len(b)
        while i < na or j < nb:
            if j >= nb or (i < na and a[i][0] < b[j][0]):
                self._one_side(a[i], prefix, out, deleted=True)
                i += 1
            elif i >= na or b[j][0] < a[i][0]:
                self._one_side(b[j], prefix, out, deleted=False)
                j += 1
            else:
                ka, ma, oa, da = a[i]
                _, mb, ob, _ = b[j]
                i += 1
                j += 1
                if oa == ob and ma == mb:
                    continue
                if da:          # both trees (same key implies same kind)
                    self.diff(oa, ob, prefix + ka, out)
                    continue
                status = "M" if (ma & S_IFMT) == (mb & S_IFMT) else "T"
                out.append(Change(ma, mb, oa, ob, status, prefix + ka))
        return out

    def _one_side(self, ent: tuple[bytes, int, bytes, bool], prefix: bytes, out: list[Change],
                  deleted: bool) -> None:
        key, mode, oid, isdir = ent
        if isdir:
            if deleted:
                self.diff(oid, None, prefix + key, out)
            else:
                self.diff(None, oid, prefix + key, out)
        elif deleted:
            out.append(Change(mode, 0, oid, None, "D", prefix + key))
        else:
            out.append(Change(0, mode, None, oid, "A", prefix + key))


def walk_log_raw(store: ObjectStore, start: bytes) -> Iterator[tuple[bytes, list[Change]]]:
    differ = TreeDiff(store)
    oid: bytes | None = store.peel(start)
    parsed: tuple[bytes, list[bytes]] | None = None
    read_raw = store.read_raw
    seen = set()
    while oid is not None:
        if oid in seen:
            raise FormatError(f"commit graph loops at {oid.hex()}")
        seen.add(oid)
        if parsed is None:
            typ, data = read_raw(oid)
            if typ != 1:
                raise FormatError(f"{oid.hex()} is not a commit")
            parsed = parse_commit(data)
        tree, parents = parsed
        if parents:
            typ, pdata = read_raw(parents[0])
            if typ != 1:
                raise FormatError(f"{parents[0].hex()} is not a commit")
            pparsed = parse_commit(pdata)
            changes = differ.diff(pparsed[0], tree)
            yield oid, changes
            oid, parsed = parents[0], pparsed
        else:
            yield oid, differ.diff(None, tree)
            oid = None


def count_needle(store: ObjectStore, mode: int, oid: bytes | None, needle: bytes) -> int:
    if oid is None:
        return 0
    if mode & S_IFMT == S_IFGITLINK:
        return (b"Subproject commit " + oid.hex().encode() + b"\n").count(needle)
    return store.read_raw(oid)[1].count(needle)


def walk_log_S(store: ObjectStore, start: bytes, needle: bytes) -> Iterator[bytes]:
    for oid, changes in walk_log_raw(store, start):
        for ch in changes:
            c1 = count_needle(store, ch.old_mode, ch.old_id, needle)
            c2 = count_needle(store, ch.new_mode, ch.new_id, needle)
            if c1 != c2:
                yield oid
                break


def format_raw(ch: Change, hash_len: int) -> str:
    zero = "0" * (2 * hash_len)
    return (f":{ch.old_mode:06o} {ch.new_mode:06o} "
            f"{ch.old_id.hex() if ch.old_id else zero} {ch.new_id.hex() if ch.new_id else zero} "
            f"{ch.status}\t{ch.path.decode('utf-8', 'surrogateescape')}")


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
