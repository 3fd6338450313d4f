"""Block sources: where a table's bytes come from (the only file-touching layer).

Contract: a BlockSource has `name` (for error messages), size() -> int,
read(offset, length) -> bytes | memoryview (short at end of data, never raises
for a valid range) and close(). BytesSource serves an in-memory buffer;
PreadSource does one os.pread into a fresh bytes object per read (flag
mmap=off, git before 004 4/4); it keeps the file's descriptor open, one per
table, as git did then. MmapSource maps the file once and returns memoryview
slices (flag mmap=on); like git it closes the descriptor right after mapping
(Python's mmap.mmap keeps a dup of it, so the map is made with the C library's
mmap where ctypes has one), and the mapping goes when the last slice does.
open_file_source(path, flags) picks one. Both open only regular files
(O_NONBLOCK, so a FIFO cannot hang the open): a directory, device or symlink
to one is a FormatError naming the path, a missing file NotExistError, any
other open failure (EMFILE, EACCES) a ReftableError naming the path.
"""
from __future__ import annotations

import ctypes
import mmap
import os
import stat
import weakref
from typing import Any, Protocol, runtime_checkable

from ..counters import WORK
from ..errors import FormatError, NotExistError, ReftableError
from ..flags import Flags


@runtime_checkable
class BlockSource(Protocol):
    name: str

    def size(self) -> int: ...

    def read(self, offset: int, length: int) -> bytes | memoryview: ...

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


def _libc_mmap() -> Any:
    """The C library's mmap/munmap through ctypes, or None where there is none."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        mm, unmap = libc.mmap, libc.munmap
    except (OSError, AttributeError):
        return None
    mm.restype = ctypes.c_void_p
    mm.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                   ctypes.c_int, ctypes.c_long]
    unmap.restype = ctypes.c_int
    unmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    return libc


_LIBC = _libc_mmap()
_MAP_FAILED = ctypes.c_void_p(-1).value


def map_fd(fd: int, size: int, name: str) -> memoryview:
    """A read-only shared mapping of fd's first size bytes as a 'B' memoryview.

    With ctypes the mapping holds no descriptor (fd may be closed at once) and
    is unmapped when the last view of it is released; without it this falls
    back to mmap.mmap (which keeps a dup of fd until the map is collected)."""
    WORK.source_maps += 1
    if _LIBC is None:
        return memoryview(mmap.mmap(fd, size, access=mmap.ACCESS_READ))
    addr = _LIBC.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
    if addr is None or addr == _MAP_FAILED:
        err = ctypes.get_errno()
        raise ReftableError(f"{name}: mmap failed: {os.strerror(err)}")
    arr = (ctypes.c_ubyte * size).from_address(addr)
    weakref.finalize(arr, _LIBC.munmap, addr, size)
    return memoryview(arr).cast("B")


class BytesSource:
    """An in-memory table (bytes, bytearray or memoryview)."""

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

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class MmapSource:
    """A file mapped once; reads are zero-copy memoryview slices (mmap=on)."""

    __slots__ = ("_size", "_view", "name")

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.name = os.fspath(path)
        fd, self._size = open_regular_file(self.name)
        try:
            self._view: memoryview | bytes = map_fd(fd, self._size, self.name) if self._size else b""
        finally:
            os.close(fd)

    def size(self) -> int:
        return self._size

    def read(self, offset: int, length: int) -> memoryview | bytes:
        if offset < 0 or length < 0:
            raise FormatError(f"bad read range {offset}+{length}", self.name, offset)
        WORK.source_mmap_slices += 1
        return self._view[offset:offset + length]

    def close(self) -> None:
        """Drop the map; it is unmapped once no slice of it is held any more."""
        view = self._view
        self._view = b""
        if isinstance(view, memoryview):
            try:
                view.release()
            except BufferError:     # a caller still holds an export of it
                pass


def open_file_source(path: str | os.PathLike[str], flags: Flags = Flags()) -> BlockSource:
    """PreadSource or MmapSource, by flags.mmap."""
    return MmapSource(path) if flags.mmap else PreadSource(path)
