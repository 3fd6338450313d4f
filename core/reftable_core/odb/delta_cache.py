"""The delta base cache (git's delta_base_cache, seed 002), with its strategies as flags.

Contract: a cache maps (pack, offset) to an inflated object (data, type) that served
as a delta base. The pack reader calls
  get(pack_key, offset) -> entry or None   (no LRU update, like git)
  detach(entry)                            (remove; the caller takes the data)
  add(pack_key, offset, data, type_code)   (evict until under the limit, then insert
                                            at the LRU tail, even if the entry alone
                                            is over the limit -- as git does)
Strategies (picked once by make_delta_cache(flags), never tested in the hot path):
  index  fixed:N  N preallocated slots; slot = git's pack_entry_hash(p, offset) % N;
                  adding to an occupied slot releases its entry first (a collision
                  evicts, regardless of the LRU) -- git before 6/7.
         hashmap  a real dict keyed by (pack, offset) -- git after 6/7.
  lru    blob_first  on overflow walk the WHOLE LRU list releasing blobs while over
                  the limit, then walk it again releasing anything -- before 5/7.
         single   walk from the oldest entry releasing anything -- after 5/7.
The LRU is a circular doubly-linked list of entries with a sentinel (git's list.h),
so the blob_first walk really costs a pass over every entry.
Counters in .stats: lookups, hits, misses, adds, evictions (LRU releases),
collisions (slot replacements), bytes (current), peak_bytes, entries, lru_steps
(nodes visited by eviction walks) and deltas (applied by the pack reader).
"""
from __future__ import annotations

from typing import Any

from ..counters import WORK
from ..flags import Flags, fixed_slots

OBJ_BLOB = 3
_MASK64 = (1 << 64) - 1


STATS_FIELDS = ("adds", "bytes", "collisions", "deltas", "entries", "evictions", "hits",
                "limit", "lookups", "lru_steps", "peak_bytes", "strategy")


class CacheStats:
    __slots__ = STATS_FIELDS      # as_dict reads these (a compiled class has no __slots__)

    def __init__(self, limit: int, strategy: str) -> None:
        self.lookups = self.hits = self.adds = self.evictions = self.collisions = 0
        self.lru_steps = 0      # LRU nodes visited by eviction walks (the blob_first cost)
        self.deltas = 0         # deltas applied by the pack reader (the cost of misses)
        self.bytes = self.peak_bytes = self.entries = 0
        self.limit = limit
        self.strategy = strategy

    @property
    def misses(self) -> int:
        return self.lookups - self.hits

    def as_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in STATS_FIELDS}
        d["misses"] = self.misses
        return d

    def __repr__(self) -> str:
        return "CacheStats(" + ", ".join(f"{k}={v}" for k, v in self.as_dict().items()) + ")"


class Entry:
    """One cached base; also a node of the LRU list (prev/next)."""
    __slots__ = ("data", "next", "offset", "pack", "prev", "size", "type")

    def __init__(self, pack: int = -1, offset: int = -1, data: bytes | None = None,
                 type_code: int = 0, size: int = 0) -> None:
        self.pack = pack
        self.offset = offset
        self.data = data
        self.type = type_code
        self.size = size
        self.prev: Entry = self
        self.next: Entry = self


def pack_entry_hash(pack_key: int, offset: int) -> int:
    """git's pack_entry_hash before 6/7 (unsigned long arithmetic); pack_key stands
    for the packed_git pointer."""
    h = (pack_key + offset) & _MASK64
    h = (h + (h >> 8) + (h >> 16)) & _MASK64
    return h


class _CacheBase:
    """LRU list + byte accounting shared by both index strategies."""

    def __init__(self, limit: int, lru: str, strategy: str) -> None:
        self.limit = limit
        self.head = Entry()              # sentinel of the circular LRU list
        self.stats = CacheStats(limit, strategy)
        WORK.track_cache(self.stats)
        self._evict = self._evict_blob_first if lru == "blob_first" else self._evict_single

    # list.h
    def _list_add_tail(self, ent: Entry) -> None:
        head = self.head
        last = head.prev
        ent.prev = last
        ent.next = head
        last.next = ent
        head.prev = ent

    @staticmethod
    def _list_del(ent: Entry) -> None:
        ent.prev.next = ent.next
        ent.next.prev = ent.prev      # ent.next stays valid: list_for_each may go on

    def _evict_single(self) -> None:
        """delta_cache_lru=single: one walk of the LRU list, any entry freed."""
        self._walk_lru(False)

    def _evict_blob_first(self) -> None:
        """delta_cache_lru=blob_first (git before 5/7): a walk that frees blobs only,
        then the walk that frees any entry."""
        self._walk_lru(True)
        self._walk_lru(False)

    def _walk_lru(self, blobs_only: bool) -> None:
        """Free entries from the oldest on (blobs only, or any) until the cache is
        within its limit."""
        head = self.head
        stats = self.stats
        limit = self.limit
        steps = 0
        f = head.next
        while f is not head:
            if stats.bytes <= limit:
                break
            steps += 1
            nxt = f.next
            if not blobs_only or f.type == OBJ_BLOB:
                self._release(f)
                stats.evictions += 1
            f = nxt
        stats.lru_steps += steps

    def _release(self, ent: Entry) -> None:
        raise NotImplementedError

    def detach(self, ent: Entry) -> None:
        self._release(ent)

    def clear(self) -> None:
        head = self.head
        f = head.next
        while f is not head:
            nxt = f.next
            self._release(f)
            f = nxt

    def __len__(self) -> int:
        return self.stats.entries


class FixedSlotCache(_CacheBase):
    """git before 6/7: a static table of N entries, a colliding add replaces the slot."""

    def __init__(self, limit: int, lru: str, slots: int) -> None:
        super().__init__(limit, lru, f"fixed:{slots}/{lru}")
        self.nslots = slots
        self.slots = [Entry() for _ in range(slots)]

    def get(self, pack_key: int, offset: int) -> Entry | None:
        stats = self.stats
        stats.lookups += 1
        ent = self.slots[pack_entry_hash(pack_key, offset) % self.nslots]
        if ent.data is not None and ent.pack == pack_key and ent.offset == offset:
            stats.hits += 1
            return ent
        return None

    def _release(self, ent: Entry) -> None:
        if ent.data is not None:
            ent.data = None
            self._list_del(ent)
            stats = self.stats
            stats.bytes -= ent.size
            stats.entries -= 1

    def add(self, pack_key: int, offset: int, data: bytes, type_code: int) -> None:
        ent = self.slots[pack_entry_hash(pack_key, offset) % self.nslots]
        stats = self.stats
        if ent.data is not None:
            self._release(ent)
            stats.collisions += 1
        size = len(data)
        stats.bytes += size
        if stats.bytes > self.limit:        # (an eviction walk under the limit visits nothing)
            self._evict()
        ent.pack = pack_key
        ent.offset = offset
        ent.type = type_code
        ent.data = data
        ent.size = size
        self._list_add_tail(ent)
        stats.adds += 1
        stats.entries += 1
        if stats.bytes > stats.peak_bytes:
            stats.peak_bytes = stats.bytes


class HashmapCache(_CacheBase):
    """git after 6/7: a real hash map of (pack, offset) -> entry."""

    def __init__(self, limit: int, lru: str) -> None:
        super().__init__(limit, lru, f"hashmap/{lru}")
        self.map: dict[tuple[int, int], Entry] = {}

    def get(self, pack_key: int, offset: int) -> Entry | None:
        stats = self.stats
        stats.lookups += 1
        ent = self.map.get((pack_key, offset))
        if ent is not None:
            stats.hits += 1
        return ent

    def _release(self, ent: Entry) -> None:
        del self.map[(ent.pack, ent.offset)]
        self._list_del(ent)
        ent.data = None
        stats = self.stats
        stats.bytes -= ent.size
        stats.entries -= 1

    def add(self, pack_key: int, offset: int, data: bytes, type_code: int) -> None:
        stats = self.stats
        size = len(data)
        stats.bytes += size
        if stats.bytes > self.limit:        # (an eviction walk under the limit visits nothing)
            self._evict()
        ent = Entry(pack_key, offset, data, type_code, size)
        self._list_add_tail(ent)
        old = self.map.get((pack_key, offset))
        if old is not None:          # cannot happen through the pack reader; stay consistent
            self._release(old)
        self.map[(pack_key, offset)] = ent
        stats.adds += 1
        stats.entries += 1
        if stats.bytes > stats.peak_bytes:
            stats.peak_bytes = stats.bytes


DeltaBaseCache = FixedSlotCache | HashmapCache


def make_delta_cache(flags: Flags) -> DeltaBaseCache:
    """Pick the cache implementation from flags (index, LRU strategy, byte limit)."""
    n = fixed_slots(flags)
    if n is None:
        return HashmapCache(flags.delta_cache_limit, flags.delta_cache_lru)
    return FixedSlotCache(flags.delta_cache_limit, flags.delta_cache_lru, n)
