"""Loose refs and symrefs under $GIT_DIR (git's refs/files-backend.c).

Contract:
  read_loose(gitdir, name, hash_size, directory=None) -> LooseValue | None
      None when there is no file at $GIT_DIR/<name>, or when name may not become
      a path; directory (None, or IN_THE_WAY to tell git's EISDIR from ENOENT)
      when a directory is there. At most MAX_LOOSE_SIZE bytes are read (a
      non-regular file, FIFO or device, is never read: broken), right-trimmed; "ref:" + optional whitespace + target is
      a symref; otherwise a hex object id followed by end of data or whitespace
      (anything after that whitespace is ignored, as for FETCH_HEAD); anything
      else is a broken ref (LooseValue.broken). A symlink whose text is a valid
      refs/... name is a symref, as in git.
  ref_path(gitdir, name): the one place a refname becomes a path; RefnameError
      for a name that is neither well formed nor safe (LooseLock turns it into
      git's LockError "unable to resolve reference ...: reference broken").
  iter_loose_names(gitdir, prefix) -> sorted refnames of the regular files under refs/
      (skipping dot files and *.lock), each with a flag saying whether the name
      passes the format check; names that are not safe are skipped (junk).
  LooseLock: git's <ref>.lock protocol (lockfile.LockFile: LockError if it
      exists), written, then renamed over the ref (commit) or removed
      (rollback), creating the ref's directories (left on rollback, as git leaves
      them). delete_loose removes the file and prunes empty directories
      (prune_ref_parents, shared with the reflogs in reflog.py).
"""
from __future__ import annotations

import binascii
import errno
import os
import stat as _stat
from typing import Iterator, NamedTuple

from ..errors import LockError, RefnameError
from ..lockfile import LOCK_SUFFIX, LockFile
from .refname import (REFNAME_ALLOW_ONELEVEL, check_refname_format, path_safe_refname,
                      refname_is_safe, unsafe_refname_error)

_SPACE = b" \t\n\r"
# git reads a loose ref whole; a ref that is longer than this cannot be a valid
# one (an object id plus junk is still read from its first bytes), so no more is
# read: a ref pointing at /dev/zero or a huge file stays bounded.
MAX_LOOSE_SIZE = 64 * 1024


class LooseValue(NamedTuple):
    """What a loose ref file holds (immutable; a tuple, built per file read)."""
    oid: bytes | None = None        # direct ref
    target: bytes | None = None     # symref
    broken: bool = False            # unparseable contents


# read_loose(..., directory=IN_THE_WAY) when a directory is where the ref's file goes
# (compared by identity: no file read makes a LooseValue of no fields)
IN_THE_WAY = LooseValue()


def ref_path(gitdir: str, name: bytes) -> str:
    """$GIT_DIR/<name>: the one place a refname becomes a path. A name that is
    neither well formed nor safe (absolute, "..", a NUL byte: one that could
    escape $GIT_DIR/refs) is refused with RefnameError, whoever asks (a name from
    the command line or a symref target read from disk)."""
    if not path_safe_refname(name):
        raise unsafe_refname_error(name)
    return gitdir + os.sep + os.fsdecode(name)


def _dir_path(gitdir: str, dirname: bytes) -> str:
    """$GIT_DIR/<dirname> for a directory of the loose-ref walk (built from
    directory entries below refs/, so it cannot escape)."""
    return gitdir + os.sep + os.fsdecode(dirname)


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


def read_loose(gitdir: str, name: bytes, hash_size: int = 20,
               directory: LooseValue | None = None) -> LooseValue | None:
    """The loose ref at $GIT_DIR/<name> (the contract); a directory there gives
    directory (git's EISDIR: IN_THE_WAY, for a caller that tells it from ENOENT)."""
    if not path_safe_refname(name):
        return None                              # never a path: no such ref
    path = ref_path(gitdir, name)
    try:
        st = os.lstat(path)
    except OSError:                              # missing, or no such path (ENAMETOOLONG)
        return None
    if _stat.S_ISLNK(st.st_mode):
        try:
            link = os.fsencode(os.readlink(path))
        except OSError:
            return None
        if link.startswith(b"refs/") and check_refname_format(link, 0):
            return LooseValue(target=link)
    if _stat.S_ISDIR(st.st_mode):
        return directory
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    except OSError:
        return LooseValue(broken=True)
    try:
        if not _stat.S_ISREG(os.fstat(fd).st_mode):
            return LooseValue(broken=True)       # FIFO, device, socket: never read
        data = os.read(fd, MAX_LOOSE_SIZE + 1)
    except OSError:
        return LooseValue(broken=True)
    finally:
        os.close(fd)
    if len(data) > MAX_LOOSE_SIZE:
        hexsz = 2 * hash_size
        if data[hexsz:hexsz + 1] not in (b" ", b"\t", b"\n", b"\r"):
            return LooseValue(broken=True)       # too long for anything but oid + junk
        data = data[:hexsz + 1]
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
    names = _walk(gitdir, start, prefix)
    names.sort()
    yield from names


def _walk(gitdir: str, top: bytes, prefix: bytes) -> list[tuple[bytes, bool]]:
    """Every ref file below top (iteratively: a ref may sit thousands of
    directories deep). Only regular files (symlinks followed) count, as in git:
    a FIFO or a device under refs/ is skipped, never opened."""
    out: list[tuple[bytes, bool]] = []
    todo = [top]
    while todo:
        dirname = todo.pop()
        try:
            entries = os.scandir(_dir_path(gitdir, dirname))
        except OSError:
            continue                              # gone, not a directory, too long
        with entries:
            for e in entries:
                leaf = os.fsencode(e.name)
                if leaf.startswith(b".") or leaf.endswith(b".lock"):
                    continue
                name = dirname + leaf
                try:
                    if e.is_dir(follow_symlinks=False):
                        sub = name + b"/"
                        if sub.startswith(prefix) or prefix.startswith(sub):
                            todo.append(sub)
                        continue
                    if not e.is_file():           # follows a symlink, as git's stat does
                        continue                  # FIFO, socket, device, dangling link
                except OSError:
                    continue
                if not name.startswith(prefix):
                    continue
                good = check_refname_format(name, REFNAME_ALLOW_ONELEVEL)
                if not good and not refname_is_safe(name):
                    continue                      # junk that could escape refs/
                out.append((name, good))
    return out


# -- writing --------------------------------------------------------------------------

class LeadingDirError(LockError):
    """The directories leading to a ref's lock could not be made (git's
    safe_create_leading_directories): in_the_way when a non-directory stands where
    one must go (SCLD_EXISTS), else a failure such as a name too long (SCLD_FAILED)."""

    def __init__(self, path: str, in_the_way: bool) -> None:
        super().__init__(f"unable to create lock file {path}{LOCK_SUFFIX}; non-directory in "
                         "the way" if in_the_way else f"unable to create directory for {path}")
        self.in_the_way = in_the_way


class LooseLock:
    """<ref>.lock held for one ref until commit() or rollback(). The directories
    created for it stay on rollback, as git's safe_create_leading_directories leaves
    them (a deleted ref's empty parents are pruned by the transaction)."""

    __slots__ = ("_lock", "gitdir", "name", "path")

    def __init__(self, gitdir: str, name: bytes) -> None:
        try:
            self.path = ref_path(gitdir, name)
        except RefnameError:
            # a symref target read from disk that must not become a path: refused
            # with the words git uses when it refuses one (lock_raw_ref)
            raise LockError(f"unable to resolve reference "
                            f"'{name.decode('utf-8', 'replace')}': reference broken") from None
        self.gitdir = gitdir
        self.name = name
        existing = os.path.dirname(self.path)
        missing: list[str] = []
        while existing and not os.path.isdir(existing) and existing != os.path.dirname(existing):
            missing.append(existing)
            existing = os.path.dirname(existing)
        for d in reversed(missing):               # one level at a time: no recursion
            try:
                os.mkdir(d)
            except FileExistsError:
                if not os.path.isdir(d):          # a file (or a dangling symlink: failed)
                    raise LeadingDirError(self.path, os.path.exists(d)) from None
            except OSError:                       # ENAMETOOLONG, EACCES, ...
                raise LeadingDirError(self.path, False) from None
        self._lock = LockFile(self.path)
        # held but closed until written, as git's lock_raw_ref / close_ref_gently leave
        # it: a transaction of 100k refs holds 100k locks, not 100k descriptors
        self._lock.close_fd()

    @property
    def lock_path(self) -> str:
        return self._lock.lock_path

    def write(self, data: bytes, fsync: bool = False) -> None:
        """The new contents, written through a descriptor open only while writing
        (and fsynced with fsync, git's fsync_component for a reference)."""
        self._lock.reopen()
        try:
            self._lock.write(data)
            if fsync:
                self._lock.fsync()
        finally:
            self._lock.close_fd()

    def commit(self) -> None:
        """Rename the lock over the ref (a directory in the way is removed if empty)."""
        try:
            self._lock.commit()
        except IsADirectoryError:
            prune_empty_tree(self.path)
            self._lock.commit()

    def rollback(self) -> None:
        """Remove the lock (no-op once committed)."""
        if self._lock.is_locked:
            self._lock.rollback()


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
        except OSError as e:
            if e.errno != errno.ENAMETOOLONG:
                return                            # not empty (or gone): stop here
        d = os.path.dirname(d)


__all__ = ["LooseValue", "LooseLock", "LeadingDirError", "read_loose", "iter_loose_names",
           "write_loose", "delete_loose", "format_loose", "parse_loose_contents", "prune_ref_parents",
           "prune_empty_parents", "prune_empty_tree", "keep_dir", "ref_path"]
