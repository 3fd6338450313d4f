"""Loose objects: objects/xx/yyyy..., each a zlib stream of "type size\\0data".

Contract: decode_loose(raw, path, max_size) -> (type_name, data) (sans-IO); the
header must be git's ("<type> <size>\\0", size in canonical decimal, within its first
64 bytes), the size within max_size, the stream must inflate to exactly that many
bytes (inflation stops one byte past it, so a lying header cannot balloon) and
nothing may follow the stream (git's "garbage at end of loose object"); anything
else raises FormatError/ZlibError naming the file. LooseStore(objects_dir, hash_len,
max_object_size) answers has/read/read_header/iter_oids by file name; read_header
inflates only the header, reading the file as far as it takes.
"""
from __future__ import annotations

import os
import zlib
from collections.abc import Iterator

from ..errors import FormatError, NotExistError, ZlibError
from .inflate import MAX_OBJECT_SIZE, check_size

LOOSE_TYPES = ("commit", "tree", "blob", "tag")
HEADER_MAX = 64


def _parse_header(head: bytes, path: str | None) -> tuple[str, int, int]:
    nul = head.find(b"\0", 0, HEADER_MAX)
    if nul < 0:
        raise FormatError(f"loose object header has no NUL in its first {HEADER_MAX} bytes",
                          path, 0)
    tname_b, sp, size_b = head[:nul].partition(b" ")
    if not sp or not size_b.isdigit() or (size_b[0] == 48 and len(size_b) > 1):
        raise FormatError("malformed loose object header", path, 0)
    tname = tname_b.decode("ascii", "replace")
    if tname not in LOOSE_TYPES:
        raise FormatError(f"unknown loose object type {tname!r}", path, 0)
    size = int(size_b)
    if size > SIZE_MAX:
        _size_overflow(size_b)
    return tname, size, nul + 1


SIZE_MAX = (1 << 64) - 1


def _size_overflow(digits: bytes) -> None:
    """git's parse_loose_header reads the size digit by digit with st_mult and st_add,
    which die at the first step past SIZE_MAX: its words, no file (git names none)."""
    size = 0
    for c in digits:
        if size > SIZE_MAX // 10:
            raise FormatError(f"size_t overflow: {size} * 10")
        if size * 10 > SIZE_MAX - (c - 48):
            raise FormatError(f"size_t overflow: {size * 10} + {c - 48}")
        size = size * 10 + c - 48


def decode_loose(raw: bytes, path: str | None = None,
                 max_size: int = MAX_OBJECT_SIZE) -> tuple[str, bytes]:
    d = zlib.decompressobj()
    try:
        head = d.decompress(raw, HEADER_MAX)
        tname, size, start = _parse_header(head, path)
        check_size(size, max_size, f"loose {tname}", path, 0)
        data = head[start:]
        if len(data) <= size and not d.eof:
            data += d.decompress(d.unconsumed_tail, size + 1 - len(data))
    except zlib.error as e:
        raise ZlibError(f"bad zlib stream: {e}", path, 0) from None
    if len(data) > size:
        raise FormatError(f"loose object longer than its header's size {size}", path, 0)
    if not d.eof:
        raise FormatError("truncated loose object", path, len(raw))
    if len(data) != size:
        raise FormatError(f"loose object size {len(data)} != header {size}", path, 0)
    if d.unused_data:
        raise FormatError("garbage at end of loose object", path, len(raw) - len(d.unused_data))
    return tname, data


class LooseStore:
    def __init__(self, objects_dir: str, hash_len: int = 20,
                 max_object_size: int = MAX_OBJECT_SIZE) -> None:
        self.dir = objects_dir
        self.hash_len = hash_len
        self.max_object_size = max_object_size

    def path_of(self, oid: bytes) -> str:
        h = oid.hex()
        return os.path.join(self.dir, h[:2], h[2:])

    def has(self, oid: bytes) -> bool:
        return os.path.isfile(self.path_of(oid))

    def read(self, oid: bytes) -> tuple[str, bytes]:
        p = self.path_of(oid)
        try:
            with open(p, "rb") as f:
                raw = f.read()
        except FileNotFoundError:
            raise NotExistError(f"object {oid.hex()} not found") from None
        return decode_loose(raw, p, self.max_object_size)

    def read_header(self, oid: bytes) -> tuple[str, int]:
        p = self.path_of(oid)
        d = zlib.decompressobj()
        head = b""
        try:
            with open(p, "rb") as f:
                while b"\0" not in head and len(head) < HEADER_MAX and not d.eof:
                    chunk = f.read(4096)
                    if not chunk:
                        break
                    head += d.decompress(chunk, HEADER_MAX - len(head))
        except FileNotFoundError:
            raise NotExistError(f"object {oid.hex()} not found") from None
        except zlib.error as e:
            raise ZlibError(f"bad zlib stream: {e}", p, 0) from None
        tname, size, _ = _parse_header(head, p)
        return tname, size

    def iter_oids(self) -> Iterator[bytes]:
        hexlen = 2 * self.hash_len
        try:
            subdirs = sorted(os.listdir(self.dir))
        except FileNotFoundError:
            return
        for sub in subdirs:
            if len(sub) != 2:
                continue
            try:
                names = sorted(os.listdir(os.path.join(self.dir, sub)))
            except (NotADirectoryError, FileNotFoundError):
                continue
            for name in names:
                h = sub + name
                if len(h) == hexlen:
                    try:
                        yield bytes.fromhex(h)
                    except ValueError:
                        continue
