"""The four packed-refs line readers of seed 001 (flag packed_reader): each yields
the file's lines, LF included, by the stdio strategy it models -- fgetc (one locked
call per byte into a strbuf that grows as git's does), getc_unlocked (one unlocked
call per byte from a buffer refilled by read()), getdelim (a line per call), mmap
(one map, each LF found with .find). Counters (reftable_core.counters) are added per
file or per buffer refill, never per byte.
"""
from __future__ import annotations

import mmap as _mmap
import os
from collections.abc import Callable, Iterator

from ..counters import WORK
from ..cython_shim import cython  # the Cython build compiles this as `import cython`

# -- line readers (packed_reader) -----------------------------------------------

LineReader = Callable[[str], Iterator[bytes]]


def alloc_nr(x: int) -> int:
    """git's alloc_nr: the next allocation after x bytes."""
    return (x + 16) * 3 // 2


class StrBuf:
    """git's strbuf as lines_fgetc fills it: alloc bytes held, len used; a full
    buffer grows as ALLOC_GROW does (alloc_nr, or what is needed if more), so a
    line of n bytes costs O(log n) grows and O(n) bytes copied (both counted)."""
    __slots__ = ("buf", "copied", "grows", "len")

    def __init__(self) -> None:
        self.buf = bytearray()
        self.len = 0
        self.grows = 0
        self.copied = 0

    def grow(self, extra: int) -> None:
        """strbuf_grow(sb, extra): room for len + extra bytes and the NUL."""
        need = self.len + extra + 1
        alloc = len(self.buf)
        if need > alloc:
            new = max(alloc_nr(alloc), need)
            self.copied += self.len
            self.grows += 1
            self.buf.extend(bytes(new - alloc))


@cython.locals(n="Py_ssize_t", buf="bytearray", c="int")    # the Cython build: C ints
def lines_fgetc(path: str, sb: StrBuf | None = None) -> Iterator[bytes]:
    """One character at a time through a buffered (locked) file object, into a
    strbuf (sb, reused across lines as strbuf_reset keeps its allocation)."""
    sb = StrBuf() if sb is None else sb
    with open(path, "rb") as f:
        read = f.read
        buf = sb.buf
        n = 0
        while True:
            c = read(1)
            if not c:
                break
            if n + 1 >= len(buf):           # !strbuf_avail(sb): strbuf_grow(sb, 1)
                sb.len = n
                sb.grow(1)
            buf[n] = c[0]
            n += 1
            if c == b"\n":
                yield bytes(memoryview(buf)[:n])
                n = 0
        read_bytes = f.tell()
        WORK.packed_bytes += read_bytes
        WORK.packed_getc_locked += read_bytes + 1     # every character, then the EOF
        sb.len = n
        if n:
            yield bytes(memoryview(buf)[:n])


@cython.locals(buf="bytes", c="unsigned char", line="bytearray")  # the Cython build: a C loop
def lines_getc_unlocked(path: str, bufsize: int = 65536) -> Iterator[bytes]:
    """One character at a time from a buffer this function refills itself."""
    fd = os.open(path, os.O_RDONLY)
    try:
        line = bytearray()
        append = line.append
        while True:
            buf = os.read(fd, bufsize)
            WORK.packed_buffer_reads += 1
            if not buf:
                break
            WORK.packed_bytes += len(buf)
            WORK.packed_getc_unlocked += len(buf)
            for c in buf:
                append(c)               # grows one character at a time (amortized)
                if c == 10:
                    yield bytes(line)
                    line.clear()
        if line:
            yield bytes(line)
    finally:
        os.close(fd)


def lines_getdelim(path: str) -> Iterator[bytes]:
    """A whole line per call (readline scans for LF in C)."""
    with open(path, "rb") as f:
        yield from iter(f.readline, b"")
        WORK.packed_bytes += f.tell()


def lines_mmap(path: str) -> Iterator[bytes]:
    """Map the file and find each LF with .find on the map."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            return
        m = _mmap.mmap(f.fileno(), 0, access=_mmap.ACCESS_READ)
    WORK.packed_maps += 1
    WORK.packed_bytes += size
    try:
        find = m.find
        pos = 0
        while pos < size:
            nl = find(b"\n", pos)
            end = size if nl < 0 else nl + 1
            yield m[pos:end]
            pos = end
    finally:
        m.close()


LINE_READERS: dict[str, LineReader] = {
    "fgetc": lines_fgetc,
    "getc_unlocked": lines_getc_unlocked,
    "getdelim": lines_getdelim,
    "mmap": lines_mmap,
}
