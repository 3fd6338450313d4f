"""Loose refs, symrefs and reflogs under $GIT_DIR (git's refs/files-backend.c).

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
  LooseLock: git's <ref>.lock protocol: created with O_CREAT|O_EXCL (LockError
      if it exists), written, then renamed over the ref (commit) or removed
      (rollback). delete_loose removes the file and prunes empty directories.
  Reflogs: logs/<name>, lines "<old> <new> <name> <<email>> <time> <tz>\\t<msg>\\n"
      (no tab when the message is empty). format_reflog_line / append_reflog /
      read_reflog (newest first) / delete_reflog.
"""
from __future__ import annotations

import binascii
import os
import stat as _stat
from dataclasses import dataclass
from typing import Iterator

from ..errors import LockError, NotExistError
from .refname import check_refname_format, refname_is_safe, REFNAME_ALLOW_ONELEVEL
from .api import LogEntry

_SPACE = b" \t\n\r"


@dataclass(frozen=True, slots=True)
class LooseValue:
    oid: bytes | None = None        # direct ref
    target: bytes | None = None     # symref
    broken: bool = False            # unparseable contents


def ref_path(gitdir: str, name: bytes) -> str:
    return os.path.join(gitdir, os.fsdecode(name))


def parse_loose_contents(data: bytes, hash_size: int) -> LooseValue:
    """git's parse_loose_ref_contents on already right-trimmed data."""
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

def _lock_error(lock: str, why: str) -> LockError:
    return LockError(f"Unable to create '{lock}': {why}")


class LooseLock:
    """<ref>.lock held for one ref until commit() or rollback()."""

    def __init__(self, gitdir: str, name: bytes) -> None:
        self.path = ref_path(gitdir, name)
        self.lock = self.path + ".lock"
        self.gitdir = gitdir
        self.name = name
        self._fd = -1
        parent = os.path.dirname(self.lock)
        # remember the directories we create, to remove them again on rollback
        existing = parent
        while existing and not os.path.isdir(existing) and existing != os.path.dirname(existing):
            existing = os.path.dirname(existing)
        self._made_below = existing if existing != parent else None
        try:
            os.makedirs(parent, exist_ok=True)
        except FileExistsError:
            raise _lock_error(self.lock, "Not a directory") from None
        except NotADirectoryError:
            raise _lock_error(self.lock, "Not a directory") from None
        try:
            self._fd = os.open(self.lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            self._unmake_dirs()
            raise LockError(
                f"Unable to create '{self.lock}': File exists.\n\n"
                "Another git process seems to be running in this repository, e.g.\n"
                "an editor opened by 'git commit'. Please make sure all processes\n"
                "are terminated then try again. If it still fails, a git process\n"
                "may have crashed in this repository earlier:\n"
                "remove the file manually to continue.") from None
        except (NotADirectoryError, IsADirectoryError) as e:
            raise _lock_error(self.lock, e.strerror or "error") from None

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = os.write(self._fd, view)
            view = view[n:]

    def commit(self) -> None:
        """Rename the lock over the ref (a directory in the way is removed if empty)."""
        self._close()
        try:
            os.replace(self.lock, self.path)
        except IsADirectoryError:
            _prune_empty_tree(self.path)
            os.replace(self.lock, self.path)

    def rollback(self) -> None:
        self._close()
        try:
            os.unlink(self.lock)
        except FileNotFoundError:
            return                                # committed (or never taken)
        self._unmake_dirs()

    def _unmake_dirs(self) -> None:
        if self._made_below is not None:
            prune_empty_parents(self.gitdir, os.path.dirname(self.lock), self._made_below)
            self._made_below = None

    def _close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _prune_empty_tree(path: str) -> None:
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
    prune_empty_parents(gitdir, os.path.dirname(ref_path(gitdir, name)), _keep_dir(gitdir, name))


def _keep_dir(root: str, name: bytes) -> str:
    """git spares the first two components (refs/heads/) when pruning empty parents."""
    parts = [p for p in name.split(b"/") if p]
    return os.path.join(root, *(os.fsdecode(p) for p in parts[:2]))


def prune_empty_parents(gitdir: str, d: str, stop: str) -> None:
    stop = os.path.normpath(stop)
    d = os.path.normpath(d)
    while d.startswith(stop + os.sep):
        try:
            os.rmdir(d)
        except OSError:
            return
        d = os.path.dirname(d)


# -- reflogs ------------------------------------------------------------------------------

def reflog_path(gitdir: str, name: bytes) -> str:
    return os.path.join(gitdir, "logs", os.fsdecode(name))


def format_tz(tz_minutes: int) -> bytes:
    sign = b"-" if tz_minutes < 0 else b"+"
    m = abs(tz_minutes)
    return sign + b"%02d%02d" % (m // 60, m % 60)


def format_reflog_line(old: bytes, new: bytes, name: bytes, email: bytes, time: int,
                       tz_minutes: int, message: bytes) -> bytes:
    line = (binascii.hexlify(old) + b" " + binascii.hexlify(new) + b" " + name + b" <" + email
            + b"> " + b"%d " % time + format_tz(tz_minutes))
    if message:
        line += b"\t" + message
    return line + b"\n"


def append_reflog(gitdir: str, name: bytes, line: bytes, create: bool) -> bool:
    """Append line to logs/<name>; create the file only if create. True if written."""
    path = reflog_path(gitdir, name)
    flags = os.O_WRONLY | os.O_APPEND
    if create:
        flags |= os.O_CREAT
        os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        fd = os.open(path, flags, 0o666)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except IsADirectoryError:
        if not create:
            return False
        _prune_empty_tree(path)
        fd = os.open(path, flags, 0o666)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)
    return True


def reflog_exists(gitdir: str, name: bytes) -> bool:
    return os.path.isfile(reflog_path(gitdir, name))


def delete_reflog(gitdir: str, name: bytes) -> None:
    path = reflog_path(gitdir, name)
    try:
        os.unlink(path)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return
    prune_empty_parents(gitdir, os.path.dirname(path), _keep_dir(os.path.join(gitdir, "logs"), name))


def parse_reflog_line(refname: bytes, line: bytes, hash_size: int, index: int) -> LogEntry | None:
    """One reflog line (without its LF) as a LogEntry; None if it is malformed (git skips those)."""
    hexsz = 2 * hash_size
    if len(line) < 2 * hexsz + 2 or line[hexsz] != 0x20 or line[2 * hexsz + 1] != 0x20:
        return None
    try:
        old = binascii.unhexlify(line[:hexsz])
        new = binascii.unhexlify(line[hexsz + 1:2 * hexsz + 1])
    except binascii.Error:
        return None
    rest = line[2 * hexsz + 2:]
    ident, tab, msg = rest.partition(b"\t")
    lt = ident.find(b"<")
    gt = ident.rfind(b">")
    if lt < 0 or gt < lt:
        return None
    name = ident[:lt].rstrip(b" ")
    email = ident[lt + 1:gt]
    tail = ident[gt + 1:].split()
    try:
        when = int(tail[0]) if tail else 0
        tzs = tail[1] if len(tail) > 1 else b"+0000"
        tzv = int(tzs)
    except ValueError:
        return None
    tz = (abs(tzv) // 100 * 60 + abs(tzv) % 100) * (-1 if tzs.startswith(b"-") else 1)
    return LogEntry(refname, index, old, new, name, email, when, tz, msg)


def read_reflog(gitdir: str, name: bytes, hash_size: int = 20) -> list[LogEntry]:
    """Entries of logs/<name>, newest first (update_index = line number, 1-based)."""
    try:
        with open(reflog_path(gitdir, name), "rb") as f:
            data = f.read()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return []
    out = []
    for i, line in enumerate(data.split(b"\n"), 1):
        if not line:
            continue
        e = parse_reflog_line(name, line, hash_size, i)
        if e is not None:
            out.append(e)
    out.reverse()
    return out


__all__ = ["LooseValue", "LooseLock", "NotExistError", "read_loose", "iter_loose_names",
           "write_loose", "delete_loose", "format_loose", "parse_loose_contents",
           "format_reflog_line", "append_reflog", "read_reflog", "delete_reflog",
           "reflog_exists", "reflog_path", "ref_path"]
