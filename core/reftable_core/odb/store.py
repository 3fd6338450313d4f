"""ObjectStore: several packs, loose objects and alternates behind one API.

Contract: open_object_store(path, hash_algo=None, flags=Flags(), max_object_size=
MAX_OBJECT_SIZE) where path is a git dir or an objects dir; hash_algo None reads
extensions.objectFormat from the git dir's config (default sha1); no read
allocates an object (or delta) declared larger than max_object_size: it raises
FormatError instead (read_header still reports such sizes). The store owns one delta base cache built from
flags (see delta_cache). API:
  has(oid) -> bool; read(oid) -> (type_name, data) (NotExistError if missing);
  read_header(oid) -> (type_name, size); peel(oid) -> id of the first non-tag object;
  iter_oids() -> every id once (packs then loose, sorted within each source);
  disk_size(oid) -> the bytes the object takes on disk (git's disk_sizep: in a
      pack, from its offset to the next object's; loose, the file's size);
  delta_base(oid) -> the id of the object's delta base in its pack, or the zero
      id when it is stored whole (git's delta_base_oid);
  stats -> the cache counters; close().
Lookup order is git's: packs (most recently used pack first), then loose objects.
"""
from __future__ import annotations

import bisect
import os
from collections.abc import Iterator

from ..errors import FormatError, NotExistError
from ..flags import Flags
from .delta_cache import CacheStats, DeltaBaseCache, make_delta_cache
from .idx import PackIndex
from .inflate import MAX_OBJECT_SIZE
from .loose import LooseStore
from .pack import OBJ_OFS_DELTA, OBJ_REF_DELTA, TYPE_NAMES, Pack

HASH_LEN = {"sha1": 20, "sha256": 32}
_PACK_KEY_BASE = 0x5555_5550_0000      # fake "pointers" for pack_entry_hash
_PACK_KEY_STEP = 0x1_0000


def detect_object_format(gitdir: str) -> str:
    cfg = os.path.join(gitdir, "config")
    if not os.path.isfile(cfg):
        return "sha1"
    import configparser     # here: a repository opened with its config read needs none
    cp = configparser.RawConfigParser(strict=False)
    try:
        cp.read(cfg)
        for sec in cp.sections():
            if sec.lower() == "extensions":
                for k, v in cp.items(sec):
                    if k.lower() == "objectformat":
                        return v.strip().lower()
    except configparser.Error:
        pass
    return "sha1"


def _objects_dirs(objdir: str, seen: set[str]) -> list[str]:
    """objdir and its alternates (recursively), each once."""
    real = os.path.realpath(objdir)
    if real in seen:
        return []
    seen.add(real)
    out = [objdir]
    alt = os.path.join(objdir, "info", "alternates")
    if os.path.isfile(alt):
        with open(alt, encoding="utf-8", errors="replace") as f:
            for line in f:
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                p = line if os.path.isabs(line) else os.path.join(objdir, line)
                if os.path.isdir(p):
                    out.extend(_objects_dirs(p, seen))
    return out


class ObjectStore:
    def __init__(self, objects_dir: str, hash_algo: str = "sha1",
                 flags: Flags | None = None, max_object_size: int = MAX_OBJECT_SIZE) -> None:
        if hash_algo not in HASH_LEN:
            raise FormatError(f"unknown object format {hash_algo!r}")
        self.objects_dir = objects_dir
        self.hash_algo = hash_algo
        self.hash_len = hl = HASH_LEN[hash_algo]
        self.flags = flags or Flags()
        self.max_object_size = max_object_size
        self.cache: DeltaBaseCache = make_delta_cache(self.flags)
        self.packs: list[Pack] = []
        self.loose: list[LooseStore] = []
        self._layouts: dict[int, tuple[list[int], dict[int, bytes]]] = {}
        try:
            for d in _objects_dirs(objects_dir, set()):
                self.loose.append(LooseStore(d, hl, max_object_size))
                self._add_packs(os.path.join(d, "pack"))
        except BaseException:
            self.close()
            raise
        self._mru: Pack | None = self.packs[0] if self.packs else None

    def _add_packs(self, packdir: str) -> None:
        try:
            names = os.listdir(packdir)
        except FileNotFoundError:
            return
        found = []
        for name in names:
            if name.endswith(".idx") and name.startswith("pack-"):
                pack_path = os.path.join(packdir, name[:-4] + ".pack")
                if os.path.isfile(pack_path):
                    found.append((os.stat(pack_path).st_mtime, name, pack_path))
        found.sort(key=lambda t: (-t[0], t[1]))        # newest first, as git
        for _, name, pack_path in found:
            idx_path = os.path.join(packdir, name)
            with open(idx_path, "rb") as f:
                idx = PackIndex(f.read(), self.hash_len, idx_path)
            key = _PACK_KEY_BASE + len(self.packs) * _PACK_KEY_STEP
            self.packs.append(Pack(pack_path, idx, key, self.max_object_size))

    # -- API -------------------------------------------------------------------
    @property
    def stats(self) -> CacheStats:
        return self.cache.stats

    def _find(self, oid: bytes) -> tuple[Pack, int] | None:
        mru = self._mru
        if mru is not None:
            off = mru.idx.lookup(oid)
            if off is not None:
                return mru, off
        for p in self.packs:
            if p is mru:
                continue
            off = p.idx.lookup(oid)
            if off is not None:
                self._mru = p
                return p, off
        return None

    def has(self, oid: bytes) -> bool:
        if self._find(oid) is not None:
            return True
        return any(l.has(oid) for l in self.loose)

    def read_raw(self, oid: bytes) -> tuple[int, bytes]:
        """(type_code, data): 1 commit, 2 tree, 3 blob, 4 tag."""
        found = self._find(oid)
        if found is not None:
            pack, off = found
            return pack.read(off, self.cache)
        for l in self.loose:
            if l.has(oid):
                tname, data = l.read(oid)
                return _CODES[tname], data
        raise NotExistError(f"object {oid.hex()} not found")

    def read(self, oid: bytes) -> tuple[str, bytes]:
        typ, data = self.read_raw(oid)
        return TYPE_NAMES[typ], data

    def read_header(self, oid: bytes) -> tuple[str, int]:
        found = self._find(oid)
        if found is not None:
            pack, off = found
            typ, size = pack.read_header(off)
            if typ not in TYPE_NAMES:
                raise FormatError(f"unknown object type {typ}", pack.path, off)
            return TYPE_NAMES[typ], size
        for l in self.loose:
            if l.has(oid):
                return l.read_header(oid)
        raise NotExistError(f"object {oid.hex()} not found")

    def peel(self, oid: bytes) -> bytes:
        """Follow tag objects to the first non-tag object's id."""
        seen = set()
        while True:
            typ, data = self.read_raw(oid)
            if typ != 4:
                return oid
            if oid in seen:
                raise FormatError(f"tag loop at {oid.hex()}")
            seen.add(oid)
            if not data.startswith(b"object "):
                raise FormatError(f"tag {oid.hex()} has no object line")
            end = data.find(b"\n")
            try:
                oid = bytes.fromhex(data[7:end].decode("ascii"))
            except (ValueError, UnicodeDecodeError):
                raise FormatError(f"tag {oid.hex()} has a bad object line") from None
            if len(oid) != self.hash_len:
                raise FormatError("tag object id has the wrong length")

    def _pack_layout(self, pack: Pack) -> tuple[list[int], dict[int, bytes]]:
        """A pack's object offsets, sorted, and its offset -> id map (built once)."""
        got = self._layouts.get(pack.key)
        if got is None:
            by_off = {off: oid for oid, off in pack.idx.entries()}
            got = self._layouts[pack.key] = (sorted(by_off), by_off)
        return got

    def disk_size(self, oid: bytes) -> int:
        """On-disk bytes of oid (NotExistError when missing)."""
        found = self._find(oid)
        if found is not None:
            pack, off = found
            offsets, _ = self._pack_layout(pack)
            i = bisect.bisect_right(offsets, off)
            return (offsets[i] if i < len(offsets) else pack.end) - off
        for l in self.loose:
            if l.has(oid):
                return os.path.getsize(l.path_of(oid))
        raise NotExistError(f"object {oid.hex()} not found")

    def delta_base(self, oid: bytes) -> bytes:
        """The delta base id of a packed delta, else the zero id."""
        found = self._find(oid)
        if found is None:
            if not self.has(oid):
                raise NotExistError(f"object {oid.hex()} not found")
            return bytes(self.hash_len)
        pack, off = found
        typ, _, pos = pack.header(off)
        if typ == OBJ_OFS_DELTA:
            base, _ = pack.delta_base(typ, pos, off)
            return self._pack_layout(pack)[1][base]
        if typ == OBJ_REF_DELTA:
            return bytes(pack.buf[pos:pos + self.hash_len])
        return bytes(self.hash_len)

    def iter_oids(self) -> Iterator[bytes]:
        seen: set[bytes] = set()
        for p in self.packs:
            for oid in p.idx.names():
                if oid not in seen:
                    seen.add(oid)
                    yield oid
        for l in self.loose:
            for oid in l.iter_oids():
                if oid not in seen:
                    seen.add(oid)
                    yield oid

    def close(self) -> None:
        self.cache.clear()
        for p in self.packs:
            p.close()
        self.packs = []
        self._mru = None

    def __enter__(self) -> ObjectStore:  # noqa: PYI034 (3.10 has no typing.Self)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_CODES = {"commit": 1, "tree": 2, "blob": 3, "tag": 4}


def open_object_store(path: str | os.PathLike[str], hash_algo: str | None = None,
                      flags: Flags | None = None,
                      max_object_size: int = MAX_OBJECT_SIZE) -> ObjectStore:
    """Open the object store of a git dir (or of an objects dir directly)."""
    path = os.fspath(path)
    if os.path.isdir(os.path.join(path, "objects")):
        gitdir, objdir = path, os.path.join(path, "objects")
    elif os.path.isdir(os.path.join(path, ".git", "objects")):
        gitdir = os.path.join(path, ".git")
        objdir = os.path.join(gitdir, "objects")
    elif os.path.isdir(path):
        gitdir, objdir = os.path.dirname(os.path.abspath(path)), path
    else:
        raise NotExistError(f"no object store at {path}")
    if hash_algo is None:
        hash_algo = detect_object_format(gitdir)
    return ObjectStore(objdir, hash_algo, flags, max_object_size)
