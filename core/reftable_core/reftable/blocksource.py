"""Block sources: where a table's bytes come from (the only file-touching layer).

Contract: a BlockSource has `name` (for error messages), size() -> int,
read(offset, length) -> bytes (a copy; short at end of data, never raises for a
valid range), in_place(offset) -> (buffer, index) | None and close().
in_place hands out, without copying, a buffer holding the source's bytes from
offset on and the index of offset in it (buffer[index + i] is byte offset + i;
a slice of it is a fresh bytes), or None where bytes can only be read by copying.
BytesSource serves an in-memory buffer (in place: the bytes themselves);
PreadSource does one os.pread into a fresh bytes object per read (flag
mmap=off, git before 004 4/4) and has no in-place bytes; it keeps the file's
descriptor open, one per table, as git did then. MmapSource maps the file once
(flag mmap=on) and hands out that map in place (an mmap.mmap: indexing gives an
int, slicing a bytes, so a field sliced out of it is the one copy git's
memcpy makes); like git it closes the descriptor right after mapping (see
map_fd), and the map is unmapped by close() or when the last block holding it
goes. open_file_source(path, flags) picks one. Both open only regular files
(O_NONBLOCK, so a FIFO cannot hang the open): a directory, device or symlink
to one is a FormatError naming the path, a missing file NotExistError, any
other open failure (EMFILE, EACCES) a ReftableError naming the path.
"""
from __future__ import annotations

import ctypes
import mmap
import os
import stat
from typing import Any, Protocol, runtime_checkable

from ..counters import WORK
from ..errors import FormatError, NotExistError, ReftableError
from ..flags import Flags


@runtime_checkable
class BlockSource(Protocol):
    name: str

    def size(self) -> int: ...

    def read(self, offset: int, length: int) -> bytes: ...

    def in_place(self, offset: int) -> tuple[bytes | mmap.mmap, int] | None: ...

    def close(self) -> None: ...


def open_regular_file(path: str, what: str = "table") -> tuple[int, int]:
    """Open path read-only: (fd, size); only a regular file (see the contract)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        raise NotExistError(f"{path}: no such {what}") from None
    except OSError as e:
        raise ReftableError(f"{path}: cannot open {what}: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FormatError(f"not a regular file (a {what} must be one)", path)
    except BaseException:
        os.close(fd)
        raise
    return fd, st.st_size


class _PyBuffer(ctypes.Structure):
    """The C API's Py_buffer (only .buf is read)."""

    _fields_ = [("buf", ctypes.c_void_p), ("obj", ctypes.c_void_p),
                ("len", ctypes.c_ssize_t), ("itemsize", ctypes.c_ssize_t),
                ("readonly", ctypes.c_int), ("ndim", ctypes.c_int),
                ("format", ctypes.c_char_p), ("shape", ctypes.c_void_p),
                ("strides", ctypes.c_void_p), ("suboffsets", ctypes.c_void_p),
                ("internal", ctypes.c_void_p)]


def _libc_mmap() -> Any:
    """The C library's mmap through ctypes, or None where there is none."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        mm = libc.mmap
        get_buffer = ctypes.pythonapi.PyObject_GetBuffer
        release = ctypes.pythonapi.PyBuffer_Release
    except (OSError, AttributeError):
        return None
    mm.restype = ctypes.c_void_p
    mm.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                   ctypes.c_int, ctypes.c_long]
    get_buffer.argtypes = [ctypes.py_object, ctypes.POINTER(_PyBuffer), ctypes.c_int]
    get_buffer.restype = ctypes.c_int
    release.argtypes = [ctypes.POINTER(_PyBuffer)]
    release.restype = None
    return libc


_LIBC = _libc_mmap()
_MAP_FIXED = 0x10       # <sys/mman.h> MAP_FIXED (the same on Linux, the BSDs, macOS)


def _address(m: mmap.mmap) -> int:
    """Where m's memory starts (PyObject_GetBuffer; the export is released at once)."""
    view = _PyBuffer()
    if ctypes.pythonapi.PyObject_GetBuffer(m, ctypes.byref(view), 0) != 0:
        raise ReftableError("cannot take the address of a map")
    addr = view.buf
    ctypes.pythonapi.PyBuffer_Release(ctypes.byref(view))
    return int(addr)


def map_fd(fd: int, size: int, name: str) -> mmap.mmap:
    """A read-only shared mapping of fd's first size bytes (size > 0), as an mmap.mmap
    that holds no descriptor: fd may be closed at once, like git's
    `mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0); close(fd);`.

    Python's mmap.mmap of a file keeps a dup of its descriptor (one per table, EMFILE
    with a deep stack); of anonymous memory (fileno -1) it keeps none. So the map is
    made anonymous and read-only by mmap.mmap, and the file is then mapped over those
    very pages with the C library's mmap (MAP_FIXED: the anonymous pages are replaced
    in one step); mmap.mmap unmaps the same range, now the file's, on close. Without
    ctypes this falls back to mmap.mmap of fd (which keeps the dup)."""
    WORK.source_maps += 1
    if _LIBC is None:
        return mmap.mmap(fd, size, access=mmap.ACCESS_READ)
    m = mmap.mmap(-1, size, access=mmap.ACCESS_READ)
    addr = _address(m)
    got = _LIBC.mmap(addr, size, mmap.PROT_READ, mmap.MAP_SHARED | _MAP_FIXED, fd, 0)
    if got != addr:
        err = ctypes.get_errno()
        m.close()
        raise ReftableError(f"{name}: mmap failed: {os.strerror(err)}")
    return m


class BytesSource:
    """An in-memory table (bytes, bytearray or memoryview), served in place."""

    __slots__ = ("_data", "_size", "name")

    def __init__(self, data: bytes | bytearray | memoryview, name: str = "<bytes>") -> None:
        self.name = name
        self._data = bytes(data)
        self._size = len(self._data)

    def size(self) -> int:
        return self._size

    def read(self, offset: int, length: int) -> bytes:
        if offset < 0 or length < 0:
            raise FormatError(f"bad read range {offset}+{length}", self.name, offset)
        return self._data[offset:offset + length]

    def in_place(self, offset: int) -> tuple[bytes, int]:
        return self._data, offset

    def close(self) -> None:
        pass


class PreadSource:
    """A file read with os.pread, one fresh buffer per read (mmap=off)."""

    __slots__ = ("_fd", "_size", "name")

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.name = os.fspath(path)
        self._fd, self._size = open_regular_file(self.name)

    def size(self) -> int:
        return self._size

    def read(self, offset: int, length: int) -> bytes:
        if offset < 0 or length < 0:
            raise FormatError(f"bad read range {offset}+{length}", self.name, offset)
        WORK.source_preads += 1
        WORK.source_pread_bytes += length
        return os.pread(self._fd, length, offset)

    def in_place(self, offset: int) -> None:
        """None: a file read with pread has no bytes in memory until read."""
        return None

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class MmapSource:
    """A file mapped once (mmap=on): blocks use the map in place, read() copies.

    Counter source_mmap_slices: one per in_place() (a block addressed in the map,
    git's `dest->data = b->data + off`) and per read() (a copy out of it), the
    counterpart of mmap=off's source_preads."""

    __slots__ = ("_map", "_size", "name")

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.name = os.fspath(path)
        fd, self._size = open_regular_file(self.name)
        try:
            self._map: mmap.mmap | bytes | None = (map_fd(fd, self._size, self.name)
                                                   if self._size else b"")
        finally:
            os.close(fd)

    def size(self) -> int:
        return self._size

    def read(self, offset: int, length: int) -> bytes:
        if offset < 0 or length < 0:
            raise FormatError(f"bad read range {offset}+{length}", self.name, offset)
        WORK.source_mmap_slices += 1
        m = self._map
        if m is None:
            raise ValueError(f"{self.name}: read after the table was closed")
        return m[offset:offset + length]

    def in_place(self, offset: int) -> tuple[mmap.mmap | bytes, int]:
        WORK.source_mmap_slices += 1
        m = self._map
        if m is None:
            raise ValueError(f"{self.name}: read after the table was closed")
        return m, offset

    def close(self) -> None:
        """Unmap; a block still holding the map then raises ValueError, never reads
        unmapped memory (the Cython build's record loops read through a pointer they take
        again whenever they resume). Should a view of the map still be exported
        (BufferError on close: a caller's memoryview of it), the map is unmapped when the
        last view of it and the map object are freed, still never read unmapped."""
        m = self._map
        self._map = None
        if isinstance(m, mmap.mmap):
            try:
                m.close()
            except BufferError:
                pass


def open_file_source(path: str | os.PathLike[str], flags: Flags = Flags()) -> BlockSource:
    """PreadSource or MmapSource, by flags.mmap."""
    return MmapSource(path) if flags.mmap else PreadSource(path)
