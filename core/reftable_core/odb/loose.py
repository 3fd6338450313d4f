"""Loose objects: objects/xx/yyyy..., each a zlib stream of "type size\\0data".

Contract: decode_loose(raw, path) -> (type_name, data) (sans-IO, FormatError/ZlibError
on corruption, size mismatch or unknown type); LooseStore(objects_dir, hash_len)
answers has/read/read_header/iter_oids by file name.
"""
from __future__ import annotations

import os
import zlib
from collections.abc import Iterator

from ..errors import FormatError, NotExistError, ZlibError

LOOSE_TYPES = ("commit", "tree", "blob", "tag")


def _parse_header(head: bytes, path: str | None) -> tuple[str, int, int]:
    nul = head.find(b"\0")
    if nul < 0:
        raise FormatError("loose object header has no NUL", path, 0)
    try:
        tname, size_s = head[:nul].decode("ascii").split(" ")
        size = int(size_s)
    except (UnicodeDecodeError, ValueError):
        raise FormatError("malformed loose object header", path, 0) from None
    if tname not in LOOSE_TYPES:
        raise FormatError(f"unknown loose object type {tname!r}", path, 0)
    return tname, size, nul + 1


def decode_loose(raw: bytes, path: str | None = None) -> tuple[str, bytes]:
    try:
        d = zlib.decompressobj()
        body = d.decompress(raw)
    except zlib.error as e:
        raise ZlibError(f"bad zlib stream: {e}", path, 0) from None
    if not d.eof:
        raise FormatError("truncated loose object", path, len(raw))
    tname, size, start = _parse_header(body[:64], path)
    data = body[start:]
    if len(data) != size:
        raise FormatError(f"loose object size {len(data)} != header {size}", path, 0)
    return tname, data


class LooseStore:
    def __init__(self, objects_dir: str, hash_len: int = 20) -> None:
        self.dir = objects_dir
        self.hash_len = hash_len

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
        return decode_loose(raw, p)

    def read_header(self, oid: bytes) -> tuple[str, int]:
        p = self.path_of(oid)
        try:
            with open(p, "rb") as f:
                raw = f.read(4096)
        except FileNotFoundError:
            raise NotExistError(f"object {oid.hex()} not found") from None
        try:
            head = zlib.decompressobj().decompress(raw, 64)
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
