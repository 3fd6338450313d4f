"""Pack (.pack) reader: object headers, zlib streams, OFS/REF deltas, unpack_entry.

Contract: Pack(pack_path, idx, pack_key) maps the pack file, checks its header
(\"PACK\", version 2 or 3, object count == idx count) and that its trailing
checksum matches the one recorded in the idx (git's "packfile does not match
index"). read(offset, cache) -> (type_code, data) mirrors git's
cache_or_unpack_entry + unpack_entry (after seed 002 1/7): a cached (pack, offset)
is returned as is; otherwise phase 1 walks the delta chain down to a base that
is either cached (detached from the cache) or a full object, phase 2 inflates
that base, phase 3 applies the deltas outward, adding every intermediate base to
the delta base cache (the requested object itself is not cached).
Every decoding problem raises FormatError/ZlibError naming the pack and offset;
a REF_DELTA chain that loops raises FormatError instead of hanging. Sizes are
checked before anything is allocated: an object size must fit 64 bits (git's
"bad object header"), an object, delta or delta result read must fit
max_object_size, and every inflate stops at the size its header declares.
read_header(offset) -> (type_code, size) inflates only the delta-size varints of
the first delta, however many compressed bytes they span, and applies nothing.
"""
from __future__ import annotations

import mmap
import os

from ..counters import WORK
from ..errors import FormatError
from .delta import apply_delta, delta_sizes
from .delta_cache import DeltaBaseCache
from .idx import PackIndex
from .inflate import MAX_OBJECT_SIZE, check_size, inflate_exact, inflate_prefix

OBJ_COMMIT, OBJ_TREE, OBJ_BLOB, OBJ_TAG = 1, 2, 3, 4
OBJ_OFS_DELTA, OBJ_REF_DELTA = 6, 7
TYPE_NAMES = {1: "commit", 2: "tree", 3: "blob", 4: "tag"}
DELTA_HEAD_MAX = 22     # two delta-size varints of at most 11 bytes each (see decode_size)


def decode_obj_header(buf, pos: int) -> tuple[int, int, int]:
    """(type_code, size, new_pos) of the pack object header at buf[pos:]."""
    c = buf[pos]
    pos += 1
    typ = (c >> 4) & 7
    size = c & 15
    shift = 4
    while c & 0x80:
        c = buf[pos]
        pos += 1
        size |= (c & 0x7F) << shift
        shift += 7
        if shift > 70:
            raise FormatError("pack object header size too long", offset=pos)
    if size >> 64:
        raise FormatError(f"pack object size {size} does not fit 64 bits", offset=pos)
    return typ, size, pos


def decode_ofs(buf, pos: int) -> tuple[int, int]:
    """The OFS_DELTA negative offset encoding (big-endian, +1 biased per byte)."""
    c = buf[pos]
    pos += 1
    ofs = c & 0x7F
    while c & 0x80:
        c = buf[pos]
        pos += 1
        ofs = ((ofs + 1) << 7) | (c & 0x7F)
        if ofs > 1 << 64:
            raise FormatError("OFS_DELTA offset too large", offset=pos)
    return ofs, pos


class Pack:
    def __init__(self, path: str, idx: PackIndex, pack_key: int,
                 max_object_size: int = MAX_OBJECT_SIZE) -> None:
        self.path = path
        self.max_object_size = max_object_size
        self.idx = idx
        self.key = pack_key            # stands for git's packed_git pointer
        self.hash_len = hl = idx.hash_len
        self._file = open(path, "rb")  # noqa: SIM115 (kept open for the mmap)
        try:
            size = os.fstat(self._file.fileno()).st_size
            if size < 12 + hl:
                raise FormatError(f"pack too short ({size} bytes)", path, 0)
            self._map = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ)
        except BaseException:
            self._file.close()
            raise
        buf = self._map
        self.buf = buf
        self.size = size
        self.end = size - hl               # objects end where the trailer starts
        if buf[:4] != b"PACK":
            raise FormatError("bad pack signature", path, 0)
        version = int.from_bytes(buf[4:8], "big")
        if version not in (2, 3):
            raise FormatError(f"unsupported pack version {version}", path, 4)
        count = int.from_bytes(buf[8:12], "big")
        if count != idx.count:
            raise FormatError(f"pack claims {count} objects while its index has {idx.count}",
                              path, 8)
        self.count = count
        if buf[self.end:size] != idx.pack_checksum():
            raise FormatError("pack trailer checksum does not match its index "
                              "(truncated or replaced pack?)", path, self.end)
        self._mv = memoryview(buf)

    def close(self) -> None:
        try:
            self._mv.release()
            self._map.close()
        except (BufferError, ValueError):
            pass
        self._file.close()

    # -- low level -----------------------------------------------------------
    def header(self, offset: int) -> tuple[int, int, int]:
        if offset < 12 or offset >= self.end:
            raise FormatError(f"object offset {offset} outside the pack data", self.path, offset)
        try:
            return decode_obj_header(self.buf, offset)
        except IndexError:
            raise FormatError("truncated object header", self.path, offset) from None
        except FormatError as e:
            raise FormatError(e.msg, self.path, offset) from None

    def delta_base(self, typ: int, pos: int, obj_offset: int) -> tuple[int, int]:
        """(base_offset, pos after the base reference) for a delta object."""
        buf = self.buf
        if typ == OBJ_OFS_DELTA:
            try:
                ofs, pos = decode_ofs(buf, pos)
            except IndexError:
                raise FormatError("truncated OFS_DELTA offset", self.path, pos) from None
            base = obj_offset - ofs
            if ofs <= 0 or base < 12:
                raise FormatError(f"OFS_DELTA base offset out of range ({obj_offset}-{ofs})",
                                  self.path, obj_offset)
            return base, pos
        hl = self.hash_len
        if pos + hl > self.end:
            raise FormatError("truncated REF_DELTA base id", self.path, pos)
        oid = buf[pos:pos + hl]
        found = self.idx.lookup(oid)
        if found is None:
            raise FormatError(f"REF_DELTA base {oid.hex()} not in this pack", self.path, obj_offset)
        return found, pos + hl

    def inflate(self, pos: int, size: int) -> bytes:
        """Inflate the zlib stream at pos; it must produce exactly size bytes."""
        return inflate_exact(self._mv, pos, self.end, size, self.path)

    # -- git's unpack_entry ---------------------------------------------------
    def read(self, offset: int, cache: DeltaBaseCache) -> tuple[int, bytes]:
        """cache_or_unpack_entry: the object at offset as (type_code, data)."""
        WORK.pack_objects_read += 1
        ent = cache.get(self.key, offset)
        if ent is not None:
            return ent.type, ent.data  # type: ignore[return-value]  # immutable: the "copy" is free
        return self.unpack(offset, cache, True)

    def unpack(self, obj_offset: int, cache: DeltaBaseCache,
               first_checked: bool = False) -> tuple[int, bytes]:
        key = self.key
        get = cache.get
        header = self.header
        stack: list[tuple[int, int, int]] = []
        curpos = obj_offset
        data: bytes | None = None
        ref_seen: set[int] | None = None
        # phase 1: drill down to a cached base or a full object
        while True:
            if not first_checked:
                ent = get(key, curpos)
                if ent is not None:
                    typ, data = ent.type, ent.data
                    cache.detach(ent)
                    break
            first_checked = False
            typ, size, pos = header(curpos)
            if typ < OBJ_OFS_DELTA:
                break
            if typ == OBJ_REF_DELTA:
                base_offset, pos = self.delta_base(typ, pos, curpos)
                if ref_seen is None:
                    ref_seen = {o for o, _, _ in stack}
                ref_seen.add(curpos)
                if base_offset in ref_seen:
                    raise FormatError(f"delta chain loops (REF_DELTA back to {base_offset})",
                                      self.path, curpos)
            elif typ == OBJ_OFS_DELTA:
                base_offset, pos = self.delta_base(typ, pos, curpos)
                if ref_seen is not None:
                    ref_seen.add(curpos)
                    if base_offset in ref_seen:
                        raise FormatError("delta chain loops", self.path, curpos)
            else:
                raise FormatError(f"unknown object type {typ}", self.path, curpos)
            stack.append((curpos, pos, size))
            curpos = base_offset
        # phase 2: the base
        if data is None:
            if typ == 0 or typ == 5:
                raise FormatError(f"unknown object type {typ}", self.path, curpos)
            check_size(size, self.max_object_size, TYPE_NAMES[typ], self.path, curpos)
            data = self.inflate(pos, size)
        # phase 3: apply the deltas, caching every base on the way out
        assert data is not None
        obj_off = curpos
        inflate = self.inflate
        add = cache.add
        path = self.path
        limit = self.max_object_size
        cache.stats.deltas += len(stack)
        while stack:
            add(key, obj_off, data, typ)
            obj_off, pos, dsize = stack.pop()
            check_size(dsize, limit, "delta", path, obj_off)
            delta = inflate(pos, dsize)
            try:
                data = apply_delta(data, delta, limit)
            except FormatError as e:
                raise FormatError(f"bad delta: {e.msg}", path, obj_off) from None
        return typ, data

    def read_header(self, offset: int) -> tuple[int, int]:
        """(type_code, size) without applying deltas: walk the chain's headers for
        the type and inflate only the size varints of the first delta for the size."""
        typ, size, pos = self.header(offset)
        if typ < OBJ_OFS_DELTA:
            return typ, size
        base, pos = self.delta_base(typ, pos, offset)
        head = inflate_prefix(self._mv, pos, self.end, DELTA_HEAD_MAX, self.path)
        try:
            _, result_size, _ = delta_sizes(head)
        except FormatError as e:
            raise FormatError(f"delta header: {e.msg}", self.path, pos) from None
        cur = base
        seen = {offset}
        while True:
            if cur in seen:
                raise FormatError("delta chain loops", self.path, cur)
            seen.add(cur)
            t, _, p = self.header(cur)
            if t < OBJ_OFS_DELTA:
                return t, result_size
            cur, _ = self.delta_base(t, p, cur)

    def offsets(self) -> list[int]:
        return sorted(self.idx.offset_at(i) for i in range(self.idx.count))
