"""Helpers shared by the tests/test_odb_*.py files: git-generated repositories,
`git cat-file --batch` parsing, and a tiny hand-made pack/idx writer for corrupt inputs."""
from __future__ import annotations

import hashlib
import struct
import zlib
from pathlib import Path

from lab.gitbin import GitRunner


def cat_file_all(git: GitRunner, gitdir: Path) -> dict[bytes, tuple[str, bytes]]:
    out = git.out(["cat-file", "--batch-all-objects", "--batch", "--unordered"], cwd=gitdir)
    objs: dict[bytes, tuple[str, bytes]] = {}
    i = 0
    while i < len(out):
        nl = out.index(b"\n", i)
        h, t, s = out[i:nl].split()
        n = int(s)
        objs[bytes.fromhex(h.decode())] = (t.decode(), out[nl + 1:nl + 1 + n])
        i = nl + 1 + n + 1
    return objs


def obj_header(typ: int, size: int) -> bytes:
    c = (typ << 4) | (size & 15)
    size >>= 4
    out = bytearray()
    while size:
        out.append(c | 0x80)
        c = size & 0x7F
        size >>= 7
    out.append(c)
    return bytes(out)


def ofs_encode(ofs: int) -> bytes:
    out = [ofs & 0x7F]
    ofs >>= 7
    while ofs:
        ofs -= 1
        out.append(0x80 | (ofs & 0x7F))
        ofs >>= 7
    return bytes(reversed(out))


def write_pack(dirpath: Path, objects: list[tuple], hash_len: int = 20,
               name: str = "pack-test") -> tuple[Path, Path, list[int]]:
    """objects: (oid, typ, payload, base[, raw_zlib_bytes]) with typ 1-4 (base None), 6 (base = index of an
    earlier object) or 7 (base = oid). Payload is the inflated body (the delta for 6/7).
    Writes name.pack and name.idx (v2); returns their paths and the offsets."""
    h = hashlib.sha1 if hash_len == 20 else hashlib.sha256
    body = bytearray(b"PACK" + struct.pack(">II", 2, len(objects)))
    offsets = []
    for oid, typ, payload, base, *raw in objects:
        off = len(body)
        offsets.append(off)
        body += obj_header(typ, len(payload))
        if typ == 6:
            body += ofs_encode(off - offsets[base])
        elif typ == 7:
            body += base
        body += raw[0] if raw else zlib.compress(payload)
    body += h(body).digest()
    pack_sum = bytes(body[-hash_len:])
    order = sorted(range(len(objects)), key=lambda i: objects[i][0])
    fan = [0] * 256
    for i in order:
        fan[objects[i][0][0]] += 1
    acc = 0
    for b in range(256):
        acc += fan[b]
        fan[b] = acc
    idx = bytearray(b"\xfftOc" + struct.pack(">I", 2) + struct.pack(">256I", *fan))
    for i in order:
        idx += objects[i][0]
    for i in order:
        idx += struct.pack(">I", 0)
    for i in order:
        idx += struct.pack(">I", offsets[i])
    idx += pack_sum
    idx += h(idx).digest()
    dirpath.mkdir(parents=True, exist_ok=True)
    pp = dirpath / f"{name}.pack"
    ip = dirpath / f"{name}.idx"
    pp.write_bytes(bytes(body))
    ip.write_bytes(bytes(idx))
    return pp, ip, offsets


def git_oid(typ: str, data: bytes, hash_len: int = 20) -> bytes:
    h = hashlib.sha1 if hash_len == 20 else hashlib.sha256
    return h(b"%s %d\0" % (typ.encode(), len(data)) + data).digest()
