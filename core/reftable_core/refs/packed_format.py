"""The packed-refs file's own text: git's messages about it, its header traits,
reading it whole (git's load_contents) and writing it (git pack-refs --all).

Contract: PackedRefsError (a FormatError with file and byte offset) with git's texts
(unterminated_line, invalid_line, "couldn't read <path>: <reason>"); parse_traits(line,
path) -> (peeled level, sorted); load_file(path) -> (contents, map to close or None);
format_packed_refs / write_packed_refs: exactly what `git pack-refs --all` writes,
through packed-refs.lock (LockError when a stale lock exists). refs/packed.py, the
lookups and walks over it, builds on these.
"""
from __future__ import annotations

import binascii
import mmap as _mmap
import os
from typing import Iterable, Mapping

from ..counters import WORK
from ..errors import FormatError
from ..lockfile import write_locked

HEADER_PREFIX = b"# pack-refs with:"
PACKED_REFS_HEADER = b"# pack-refs with: peeled fully-peeled sorted \n"
SMALL_FILE_SIZE = 32 * 1024           # git reads files this small instead of mapping them
PEELED_NONE, PEELED_TAGS, PEELED_FULLY = 0, 1, 2


# -- git's messages ----------------------------------------------------------------

class PackedRefsError(FormatError):
    """A packed-refs file (or a read of it) git refuses: str() is git's message
    without "fatal: " ("unexpected line in <path>: <line>", "unterminated line
    in ...", "couldn't read ..."); path and offset are kept as in every FormatError."""

    def __str__(self) -> str:
        return self.msg


SHOWN_MAX = 80          # of a line, _shown reads no more than this


def _shown(text: bytes) -> str:
    """The line as git's printf shows it: up to a NUL byte; 80 bytes or more: the
    first 75 and "..." (die_invalid_line's "%.*s" / "%.75s...")."""
    cut = len(text) >= SHOWN_MAX
    if cut:
        text = text[:75]
    nul = text.find(b"\0")
    if nul >= 0:
        text = text[:nul]
    shown = text.decode("utf-8", "surrogateescape")
    return shown + "..." if cut else shown


def unterminated_line(path: str, buf: bytes | _mmap.mmap, pos: int, end: int) -> PackedRefsError:
    """git's die_unterminated_line for buf[pos:end]."""
    shown = _shown(bytes(buf[pos:min(end, pos + SHOWN_MAX)]))   # not a copy of the line
    return PackedRefsError(f"unterminated line in {path}: {shown}", path, pos)


def invalid_line(path: str, buf: bytes | _mmap.mmap, pos: int, end: int) -> PackedRefsError:
    """git's die_invalid_line: the line starting at pos (unterminated if no LF before end)."""
    eol = buf.find(b"\n", pos, end)
    if eol < 0:
        return unterminated_line(path, buf, pos, end)
    shown = _shown(bytes(buf[pos:min(eol, pos + SHOWN_MAX)]))
    return PackedRefsError(f"unexpected line in {path}: {shown}", path, pos)


def parse_traits(line: bytes, path: str) -> tuple[int, bool]:
    """(peeled level, sorted) from a header line (with or without its LF)."""
    if not line.startswith(HEADER_PREFIX):
        shown = _shown(line[:-1] if line.endswith(b"\n") else line)
        raise PackedRefsError(f"unexpected line in {path}: {shown}", path, 0)
    traits = line[len(HEADER_PREFIX):].rstrip(b"\n").split(b" ")
    if b"fully-peeled" in traits:
        peeled = PEELED_FULLY
    elif b"peeled" in traits:
        peeled = PEELED_TAGS
    else:
        peeled = PEELED_NONE
    return peeled, b"sorted" in traits


def _knows_peeled(level: int, name: bytes) -> bool:
    return level == PEELED_FULLY or (level == PEELED_TAGS and name.startswith(b"refs/tags/"))


def load_file(path: str) -> tuple[bytes | _mmap.mmap, _mmap.mmap | None]:
    """git's load_contents: (contents, the map to close or None). A missing file is
    empty; a small one is read, a larger one mapped; any other failure is git's
    "couldn't read <path>: <reason>" (a directory: "Is a directory")."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return b"", None
    except OSError as e:
        raise _read_error(path, e) from None
    try:
        size = os.fstat(fd).st_size
        if size == 0:
            return b"", None
        WORK.packed_bytes += size
        if size <= SMALL_FILE_SIZE:
            data = _read_all(fd, size)
            if len(data) != size:
                raise PackedRefsError(f"couldn't read {path}: short read", path, len(data))
            return data, None
        m = _mmap.mmap(fd, 0, access=_mmap.ACCESS_READ)
        WORK.packed_maps += 1
        return m, m
    except OSError as e:
        raise _read_error(path, e) from None
    finally:
        os.close(fd)


def _read_error(path: str, e: OSError) -> PackedRefsError:
    reason = os.strerror(e.errno) if e.errno else str(e)
    return PackedRefsError(f"couldn't read {path}: {reason}", path, 0)


def _read_all(fd: int, size: int) -> bytes:
    chunks = []
    while size > 0:
        b = os.read(fd, size)
        if not b:
            break
        chunks.append(b)
        size -= len(b)
    return b"".join(chunks)


# -- writer -------------------------------------------------------------------------

def format_packed_refs(refs: Iterable[object], peeled: Mapping[bytes, bytes] | None = None,
                       header: bytes = PACKED_REFS_HEADER, sort: bool = True) -> bytes:
    """The bytes of a packed-refs file, as `git pack-refs --all` writes them.

    refs: (name, oid) or (name, oid, peeled) tuples, or objects with .name,
    .value/.oid and .peeled (Ref, PackedEntry). Object ids are raw bytes (20/32)
    or hex (bytes or str). peeled: optional name -> peeled oid mapping.
    Sorted by name unless sort=False (the caller promises sorted input).
    """
    rows: list[tuple[bytes, bytes, bytes | None]] = []
    append = rows.append
    pmap = peeled or {}
    for r in refs:
        if isinstance(r, tuple):
            name, oid = r[0], r[1]
            p = r[2] if len(r) > 2 else None
        else:
            name = r.name                                    # type: ignore[attr-defined]
            oid = getattr(r, "value", None) or r.oid                # type: ignore[attr-defined]
            p = getattr(r, "peeled", None)
        if p is None and pmap:
            p = pmap.get(name)
        append((name, _hex(oid), None if p is None else _hex(p)))
    if sort:
        rows.sort(key=lambda t: t[0])
    out = [header]
    push = out.append
    for name, h, p in rows:
        push(h + b" " + name + b"\n")
        if p is not None:
            push(b"^" + p + b"\n")
    return b"".join(out)


def _hex(oid: object) -> bytes:
    if isinstance(oid, str):
        return oid.encode("ascii")
    if isinstance(oid, (bytes, bytearray)):
        if len(oid) in (20, 32):
            return binascii.hexlify(oid)
        return bytes(oid)
    raise TypeError(f"object id must be bytes or str, not {type(oid).__name__}")


def write_packed_refs(path: str | os.PathLike[str], refs: Iterable[object],
                      peeled: Mapping[bytes, bytes] | None = None, *, sort: bool = True,
                      fsync: bool = False) -> None:
    """Replace the packed-refs file at path, through path + ".lock"."""
    write_locked(os.fspath(path), format_packed_refs(refs, peeled, sort=sort), fsync=fsync)
