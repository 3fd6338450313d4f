"""Block sources: where a table's bytes come from (the only file-touching layer).

Contract: a BlockSource has `name` (for error messages), size() -> int,
read(offset, length) -> bytes | memoryview (short at end of data, never raises
for a valid range) and close(). BytesSource serves an in-memory buffer;
PreadSource does one os.pread into a fresh bytes object per read (flag
mmap=off, git before 004 4/4); MmapSource maps the file once and returns
memoryview slices (flag mmap=on). open_file_source(path, flags) picks one.
"""
from __future__ import annotations

import mmap
import os
from typing import Protocol, runtime_checkable

from ..errors import FormatError, NotExistError
from ..flags import Flags


@runtime_checkable
class BlockSource(Protocol):
    name: str

    def size(self) -> int: ...

    def read(self, offset: int, length: int) -> bytes | memoryview: ...

    def close(self) -> None: ...


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
        try:
            self._fd = os.open(self.name, os.O_RDONLY)
        except FileNotFoundError:
            raise NotExistError(f"{self.name}: no such table") from None
        self._size = os.fstat(self._fd).st_size

    def size(self) -> int:
        return self._size

    def read(self, offset: int, length: int) -> bytes:
        if offset < 0 or length < 0:
            raise FormatError(f"bad read range {offset}+{length}", self.name, offset)
        return os.pread(self._fd, length, offset)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class MmapSource:
    """A file mapped once; reads are zero-copy memoryview slices (mmap=on)."""

    __slots__ = ("_map", "_size", "_view", "name")

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.name = os.fspath(path)
        try:
            fd = os.open(self.name, os.O_RDONLY)
        except FileNotFoundError:
            raise NotExistError(f"{self.name}: no such table") from None
        try:
            self._size = os.fstat(fd).st_size
            if self._size:
                self._map: mmap.mmap | None = mmap.mmap(fd, self._size, access=mmap.ACCESS_READ)
                self._view: memoryview | bytes = memoryview(self._map)
            else:
                self._map = None
                self._view = b""
        finally:
            os.close(fd)

    def size(self) -> int:
        return self._size

    def read(self, offset: int, length: int) -> memoryview | bytes:
        if offset < 0 or length < 0:
            raise FormatError(f"bad read range {offset}+{length}", self.name, offset)
        return self._view[offset:offset + length]

    def close(self) -> None:
        if self._map is not None:
            if isinstance(self._view, memoryview):
                try:
                    self._view.release()
                except BufferError:
                    pass
            self._view = b""
            try:
                self._map.close()
            except BufferError:     # a caller still holds a slice; let GC unmap it
                pass
            self._map = None


def open_file_source(path: str | os.PathLike[str], flags: Flags = Flags()) -> BlockSource:
    """PreadSource or MmapSource, by flags.mmap."""
    return MmapSource(path) if flags.mmap else PreadSource(path)
