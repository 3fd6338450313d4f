"""Walks mirroring seed 002's workloads: `git log --raw` and `git log -S<needle>`.

Contract:
  log_raw(gitdir, start_ref, flags) -> iterator of (commit_id, [Change, ...])
      first-parent walk from start_ref; each commit's tree is diffed recursively
      against its first parent's tree (the root commit against the empty tree, as
      log.showRoot=true does); reads commits and trees only.
  log_S(gitdir, start_ref, needle, flags) -> iterator of matching commit ids
      the same walk, plus for every changed path the blobs on both sides; a commit
      matches when the needle's (non-overlapping) occurrence count differs between
      the two sides of any changed path (git's pickaxe -S, no rename detection).
The store-level variants walk_log_raw(store, oid) / walk_log_S(store, oid, needle)
let a caller keep the store (and its delta cache counters). Changes come in
git's diff-tree order; format_raw() renders one as `git log --raw --no-abbrev`.
Rename detection is not done: compare with git's `--no-renames`.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from typing import NamedTuple

from ..errors import FormatError, NotExistError
from ..flags import Flags
from .store import ObjectStore, open_object_store

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


def parse_commit(data: bytes) -> tuple[bytes, list[bytes]]:
    """(tree id, [parent ids]) from a commit object's header."""
    tree = None
    parents = []
    pos = 0
    while True:
        nl = data.find(b"\n", pos)
        if nl < 0 or nl == pos:
            break
        line = data[pos:nl]
        if line.startswith(b"tree "):
            tree = bytes.fromhex(line[5:].decode("ascii"))
        elif line.startswith(b"parent "):
            parents.append(bytes.fromhex(line[7:].decode("ascii")))
        elif tree is not None and not line.startswith(b"parent "):
            break
        pos = nl + 1
    if tree is None:
        raise FormatError("commit without a tree line")
    return tree, parents


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


# -- start refs ----------------------------------------------------------------
def _read_text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            return f.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def _files_ref(gitdir: str, name: str, depth: int = 0) -> bytes | None:
    if depth > 5:
        raise FormatError(f"symref loop at {name}")
    text = _read_text(os.path.join(gitdir, name))
    if text is not None and text.strip():
        text = text.strip()
        if text.startswith("ref: "):
            return _files_ref(gitdir, text[5:].strip(), depth + 1)
        try:
            return bytes.fromhex(text)
        except ValueError:
            pass
    packed = _read_text(os.path.join(gitdir, "packed-refs"))
    if packed:
        for line in packed.splitlines():
            if line and line[0] not in "#^":
                h, _, ref = line.partition(" ")
                if ref == name:
                    return bytes.fromhex(h)
    return None


def resolve_start(gitdir: str | os.PathLike[str], start_ref: str | bytes | None,
                  flags: Flags | None = None, hash_len: int = 20) -> bytes:
    """A commit-ish: hex id, full ref, or short name (HEAD, branch, tag)."""
    gitdir = os.fspath(gitdir)
    if isinstance(start_ref, bytes) and len(start_ref) == hash_len:
        return start_ref
    name = (start_ref.decode() if isinstance(start_ref, bytes) else start_ref) or "HEAD"
    if len(name) == 2 * hash_len:
        try:
            return bytes.fromhex(name)
        except ValueError:
            pass
    candidates = [name] if name.startswith("refs/") or name == "HEAD" else [
        name, f"refs/{name}", f"refs/tags/{name}", f"refs/heads/{name}",
        f"refs/remotes/{name}"]
    try:       # the reftable-aware repo layer, when another helper has written it
        from .. import repo as _repo  # type: ignore[attr-defined]
        r = _repo.open_repo(gitdir, flags or Flags())
        refs = r.refs
        for c in candidates:
            ref = refs.resolve(c.encode())
            if ref is not None and ref.value is not None:
                return ref.value
    except (ImportError, AttributeError):
        pass
    for c in candidates:
        v = _files_ref(gitdir, c)
        if v is not None:
            return v
    raise NotExistError(f"unknown revision {name!r}")


def log_raw(gitdir: str | os.PathLike[str], start_ref: str | bytes | None = None,
            flags: Flags | None = None) -> Iterator[tuple[bytes, list[Change]]]:
    with open_object_store(gitdir, None, flags) as store:
        start = resolve_start(gitdir, start_ref, flags, store.hash_len)
        yield from walk_log_raw(store, start)


def log_S(gitdir: str | os.PathLike[str], start_ref: str | bytes | None, needle: bytes | str,
          flags: Flags | None = None) -> Iterator[bytes]:
    if isinstance(needle, str):
        needle = needle.encode()
    with open_object_store(gitdir, None, flags) as store:
        start = resolve_start(gitdir, start_ref, flags, store.hash_len)
        yield from walk_log_S(store, start, needle)
