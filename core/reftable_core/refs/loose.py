"""Loose refs and symrefs under $GIT_DIR (git's refs/files-backend.c).

Contract:
  read_loose(gitdir, name, hash_size) -> LooseValue | None
      None when there is no file (or a directory) at $GIT_DIR/<name>. The file
      is read whole and right-trimmed; "ref:" + optional whitespace + target is
      a symref; otherwise a hex object id followed by end of data or whitespace
      (anything after that whitespace is ignored, as for FETCH_HEAD); anything
      else is a broken ref (LooseValue.broken). A symlink whose text is a valid
      refs/... name is a symref, as in git.
  iter_loose_names(gitdir, prefix) -> sorted refnames of the files under refs/
      (skipping dot files and *.lock), each with a flag saying whether the name
      passes the format check; names that are not safe are skipped (junk).
  LooseLock: git's <ref>.lock protocol (lockfile.LockFile: LockError if it
      exists), written, then renamed over the ref (commit) or removed
      (rollback), creating the ref's directories and removing them again on
      rollback. delete_loose removes the file and prunes empty directories
      (prune_ref_parents, shared with the reflogs in reflog.py).
"""
from __future__ import annotations

import binascii
import os
import stat as _stat
from dataclasses import dataclass
from typing import Iterator

from ..errors import LockError
from ..lockfile import LOCK_SUFFIX, LockFile
from .refname import REFNAME_ALLOW_ONELEVEL, check_refname_format, refname_is_safe

_SPACE = b" \t\n\r"


@dataclass(frozen=True, slots=True)
class LooseValue:
    oid: bytes | None = None        # direct ref
    target: bytes | None = None     # symref
    broken: bool = False            # unparseable contents


def ref_path(gitdir: str, name: bytes) -> str:
    return os.path.join(gitdir, os.fsdecode(name))


def parse_loose_contents(data: bytes, hash_size: int) -> LooseValue:
    """git's parse_loose_ref_contents on already right-trimmed data (read as a C
    string: it ends at the first NUL)."""
    data = data.split(b"\0", 1)[0]
    if data.startswith(b"ref:"):
        return LooseValue(target=data[4:].lstrip(_SPACE))
    hexsz = 2 * hash_size
    if len(data) < hexsz or (len(data) > hexsz and data[hexsz] not in _SPACE):
        return LooseValue(broken=True)
    try:
        return LooseValue(oid=binascii.unhexlify(data[:hexsz]))
    except binascii.Error:
        return LooseValue(broken=True)


def read_loose(gitdir: str, name: bytes, hash_size: int = 20) -> LooseValue | None:
    path = ref_path(gitdir, name)
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if _stat.S_ISLNK(st.st_mode):
        try:
            link = os.fsencode(os.readlink(path))
        except OSError:
            return None
        if link.startswith(b"refs/") and check_refname_format(link, 0):
            return LooseValue(target=link)
    if _stat.S_ISDIR(st.st_mode):
        return None
    try:
        with open(path, "rb") as f:
            data = f.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    return parse_loose_contents(data.rstrip(_SPACE), hash_size)


def iter_loose_names(gitdir: str, prefix: bytes = b"refs/") -> Iterator[tuple[bytes, bool]]:
    """(refname, name passes the format check) for every loose ref file under refs/
    whose name starts with prefix, sorted by name."""
    base = b"refs/"
    # start the walk at the deepest directory the prefix names
    start = base
    if prefix.startswith(base):
        cut = prefix.rfind(b"/")
        start = prefix[:cut + 1]
    elif not base.startswith(prefix):
        return
    names: list[tuple[bytes, bool]] = []
    _walk(gitdir, start, prefix, names)
    names.sort()
    yield from names


def _walk(gitdir: str, dirname: bytes, prefix: bytes, out: list[tuple[bytes, bool]]) -> None:
    try:
        entries = os.scandir(ref_path(gitdir, dirname))
    except (FileNotFoundError, NotADirectoryError):
        return
    with entries:
        for e in entries:
            leaf = os.fsencode(e.name)
            if leaf.startswith(b".") or leaf.endswith(b".lock"):
                continue
            name = dirname + leaf
            if e.is_dir(follow_symlinks=False):
                sub = name + b"/"
                if sub.startswith(prefix) or prefix.startswith(sub):
                    _walk(gitdir, sub, prefix, out)
                continue
            if not name.startswith(prefix):
                continue
            good = check_refname_format(name, REFNAME_ALLOW_ONELEVEL)
            if not good and not refname_is_safe(name):
                continue                          # junk that could escape refs/
            out.append((name, good))


# -- writing --------------------------------------------------------------------------

class LooseLock:
    """<ref>.lock held for one ref until commit() or rollback(): a LockFile plus
    the directories created for it (removed again on rollback)."""

    __slots__ = ("_lock", "_made_below", "gitdir", "name", "path")

    def __init__(self, gitdir: str, name: bytes) -> None:
        self.path = ref_path(gitdir, name)
        self.gitdir = gitdir
        self.name = name
        parent = os.path.dirname(self.path)
        # remember the directories we create, to remove them again on rollback
        existing = parent
        while existing and not os.path.isdir(existing) and existing != os.path.dirname(existing):
            existing = os.path.dirname(existing)
        self._made_below = existing if existing != parent else None
        try:
            os.makedirs(parent, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise LockError(f"Unable to create '{self.path}{LOCK_SUFFIX}': "
                            "Not a directory") from None
        try:
            self._lock = LockFile(self.path)
        except LockError:
            self._unmake_dirs()
            raise

    @property
    def lock_path(self) -> str:
        return self._lock.lock_path

    def write(self, data: bytes) -> None:
        self._lock.write(data)

    def commit(self) -> None:
        """Rename the lock over the ref (a directory in the way is removed if empty)."""
        try:
            self._lock.commit()
        except IsADirectoryError:
            prune_empty_tree(self.path)
            self._lock.commit()

    def rollback(self) -> None:
        """Remove the lock and the directories made for it (no-op once committed)."""
        if not self._lock.is_locked:
            return
        self._lock.rollback()
        self._unmake_dirs()

    def _unmake_dirs(self) -> None:
        if self._made_below is not None:
            prune_empty_parents(os.path.dirname(self.path), self._made_below)
            self._made_below = None


def prune_empty_tree(path: str) -> None:
    """Remove the directory tree at path if it holds no files (IsADirectoryError if it does)."""
    for root, _dirs, files in os.walk(path, topdown=False):
        if files:
            raise IsADirectoryError(path)
        os.rmdir(root)


def format_loose(oid: bytes | None = None, target: bytes | None = None) -> bytes:
    if target is not None:
        return b"ref: " + target + b"\n"
    assert oid is not None
    return binascii.hexlify(oid) + b"\n"


def write_loose(gitdir: str, name: bytes, oid: bytes | None = None,
                target: bytes | None = None) -> None:
    """Write one loose ref through its lock (no old-value check)."""
    lk = LooseLock(gitdir, name)
    try:
        lk.write(format_loose(oid, target))
        lk.commit()
    except BaseException:
        lk.rollback()
        raise


def delete_loose(gitdir: str, name: bytes, prune: bool = True) -> bool:
    """Remove the loose file of name (True if there was one); prune empty parents
    (git spares refs/<first>/) unless prune is False (see prune_ref_parents)."""
    path = ref_path(gitdir, name)
    try:
        os.unlink(path)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return False
    if prune:
        prune_ref_parents(gitdir, name)
    return True


def prune_ref_parents(gitdir: str, name: bytes) -> None:
    """Remove the empty directories above refs/<first>/.../name (after its lock is gone)."""
    prune_empty_parents(os.path.dirname(ref_path(gitdir, name)), keep_dir(gitdir, name))


def keep_dir(root: str, name: bytes) -> str:
    """git spares the first two components (refs/heads/) when pruning empty parents."""
    parts = [p for p in name.split(b"/") if p]
    return os.path.join(root, *(os.fsdecode(p) for p in parts[:2]))


def prune_empty_parents(d: str, stop: str) -> None:
    """Remove empty directories from d upwards, stopping at (and sparing) stop."""
    stop = os.path.normpath(stop)
    d = os.path.normpath(d)
    while d.startswith(stop + os.sep):
        try:
            os.rmdir(d)
        except OSError:
            return
        d = os.path.dirname(d)


__all__ = ["LooseValue", "LooseLock", "read_loose", "iter_loose_names", "write_loose",
           "delete_loose", "format_loose", "parse_loose_contents", "prune_ref_parents",
           "prune_empty_parents", "prune_empty_tree", "keep_dir", "ref_path"]
