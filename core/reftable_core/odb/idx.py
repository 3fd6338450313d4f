"""Pack index (.idx) reader, versions 1 and 2, SHA-1 and SHA-256 (sans-IO on a buffer).

Contract: PackIndex(buf, hash_len, path) validates the layout once (magic,
version, monotonic fan-out, total size) and raises FormatError naming the file
and offset on any inconsistency. lookup(oid) -> pack offset or None uses the
fan-out table to bound a binary search over the sorted names; names() iterates
the ids in sorted order; offset_at(i) gives the i-th object's offset (64-bit
offsets of v2 included).

v2: "\\377tOc", version 2, fan-out[256] (4 bytes each), names[N], crc32[N],
offset32[N] (MSB set = index into the 64-bit table), offset64[K], pack checksum,
idx checksum.  v1: fan-out[256], then N x (offset32, name), pack checksum, idx
checksum.
"""
from __future__ import annotations

import struct
from collections.abc import Iterator

from ..cython_shim import cython     # the Cython build compiles this as `import cython`
from ..errors import FormatError

Buf = bytes    # (or an mmap: slicing must give bytes, comparable with <)

IDX_V2_MAGIC = b"\xfftOc"


class PackIndex:
    __slots__ = (
        "_big_count",
        "_buf",
        "_entry",
        "_names_off",
        "_off32",
        "_off64",
        "count",
        "fanout",
        "hash_len",
        "path",
        "version",
    )

    def __init__(self, buf: Buf, hash_len: int = 20, path: str | None = None) -> None:
        self.path = path
        self.hash_len = hash_len
        self._buf = buf
        n = len(buf)
        if n >= 8 and bytes(buf[:4]) == IDX_V2_MAGIC:
            (version,) = struct.unpack_from(">I", buf, 4)
            if version != 2:
                raise FormatError(f"unsupported idx version {version}", path, 4)
            self.version = 2
            fan_off = 8
        else:
            self.version = 1
            fan_off = 0
        if n < fan_off + 1024:
            raise FormatError("idx too short for its fan-out table", path, n)
        fanout = struct.unpack_from(">256I", buf, fan_off)
        prev = 0
        for i, v in enumerate(fanout):
            if v < prev:
                raise FormatError(f"idx fan-out not monotonic at entry {i} ({v} < {prev})",
                                  path, fan_off + 4 * i)
            prev = v
        self.fanout = fanout
        count = fanout[255]
        self.count = count
        hl = hash_len
        if self.version == 2:
            self._names_off = fan_off + 1024
            crc_off = self._names_off + count * hl
            self._off32 = crc_off + 4 * count
            self._off64 = self._off32 + 4 * count
            self._entry = hl
            min_size = self._off64 + 2 * hl
            if n < min_size:
                raise FormatError(f"idx truncated: {n} bytes, need at least {min_size}", path, n)
            big = (n - min_size)
            if big % 8:
                raise FormatError("idx has a partial 64-bit offset table", path, self._off64)
            self._big_count = big // 8
        else:
            self._names_off = fan_off + 1024 + 4       # name follows the 4-byte offset
            self._off32 = fan_off + 1024
            self._off64 = 0
            self._entry = hl + 4
            self._big_count = 0
            need = fan_off + 1024 + count * (hl + 4) + 2 * hl
            if n != need:
                raise FormatError(f"idx v1 size {n} != expected {need}", path, min(n, need))

    # -- access --------------------------------------------------------------
    def offset_at(self, i: int) -> int:
        buf = self._buf
        if self.version == 2:
            o = self._off32 + 4 * i
            v = int.from_bytes(buf[o:o + 4], "big")
            if v & 0x80000000:
                k = v & 0x7FFFFFFF
                if k >= self._big_count:
                    raise FormatError(f"idx 64-bit offset index {k} out of range", self.path, o)
                o = self._off64 + 8 * k
                v = int.from_bytes(buf[o:o + 8], "big")
            return v
        o = self._off32 + i * self._entry
        return int.from_bytes(buf[o:o + 4], "big")

    @cython.locals(buf="const unsigned char[:]", lo="Py_ssize_t", hi="Py_ssize_t",
                   mid="Py_ssize_t", o="Py_ssize_t", base="Py_ssize_t", step="Py_ssize_t",
                   hl="Py_ssize_t", c="int")   # the Cython build: the compare in C
    def find(self, oid: bytes) -> int:
        """Position of oid in the sorted names, or -1."""
        if len(oid) != self.hash_len:
            return -1
        first = oid[0]
        fanout = self.fanout
        lo = fanout[first - 1] if first else 0
        hi = fanout[first]
        buf = self._buf
        base = self._names_off
        step = self._entry
        hl = self.hash_len
        while lo < hi:
            mid = (lo + hi) >> 1
            o = base + mid * step
            name = buf[o:o + hl]
            if name == oid:
                return mid
            if name < oid:
                lo = mid + 1
            else:
                hi = mid
        return -1

    def lookup(self, oid: bytes) -> int | None:
        i = self.find(oid)
        return None if i < 0 else self.offset_at(i)

    def __contains__(self, oid: bytes) -> bool:
        return self.find(oid) >= 0

    def __len__(self) -> int:
        return self.count

    def names(self) -> Iterator[bytes]:
        buf = self._buf
        base = self._names_off
        step = self._entry
        hl = self.hash_len
        for i in range(self.count):
            o = base + i * step
            yield bytes(buf[o:o + hl])

    def entries(self) -> Iterator[tuple[bytes, int]]:
        """(oid, offset) in name order."""
        for i, name in enumerate(self.names()):
            yield name, self.offset_at(i)

    def pack_checksum(self) -> bytes:
        n = len(self._buf)
        return bytes(self._buf[n - 2 * self.hash_len:n - self.hash_len])
