"""odb.delta_cache: both index strategies and both LRU strategies, counters."""
from __future__ import annotations

import pytest
from reftable_core.flags import Flags
from reftable_core.odb.delta_cache import (
    FixedSlotCache,
    HashmapCache,
    make_delta_cache,
    pack_entry_hash,
)

BLOB, TREE = 3, 2


def keys_in_lru(c) -> list[int]:
    out = []
    f = c.head.next
    while f is not c.head:
        out.append(f.offset)
        f = f.next
    return out


def test_make_delta_cache_picks_strategy() -> None:
    c = make_delta_cache(Flags(delta_cache_index="fixed:16", delta_cache_lru="blob_first",
                               delta_cache_limit=1000))
    assert isinstance(c, FixedSlotCache) and c.nslots == 16 and c.limit == 1000
    assert c._evict == c._evict_blob_first
    c = make_delta_cache(Flags())
    assert isinstance(c, HashmapCache) and c._evict == c._evict_single


@pytest.mark.parametrize("lru", ["single", "blob_first"])
def test_get_detach_and_accounting(lru: str) -> None:
    c = HashmapCache(100, lru)
    c.add(1, 10, b"x" * 30, TREE)
    c.add(1, 20, b"y" * 30, BLOB)
    assert c.stats.bytes == 60 and len(c) == 2
    e = c.get(1, 10)
    assert e is not None and e.data == b"x" * 30 and e.type == TREE
    assert c.get(1, 11) is None and c.get(2, 10) is None
    c.detach(e)
    assert c.stats.bytes == 30 and c.get(1, 10) is None
    assert c.stats.hits == 1 and c.stats.misses == 3 and c.stats.evictions == 0


def test_single_evicts_oldest_whatever_type() -> None:
    c = HashmapCache(100, "single")
    for off, t in [(1, TREE), (2, BLOB), (3, TREE), (4, BLOB)]:
        c.add(0, off, b"." * 30, t)
    # 4th add: 120 > 100, evict oldest (a tree)
    assert keys_in_lru(c) == [2, 3, 4]
    assert c.stats.evictions == 1 and c.stats.bytes == 90


def test_blob_first_evicts_blobs_anywhere_first() -> None:
    c = HashmapCache(100, "blob_first")
    for off, t in [(1, TREE), (2, TREE), (3, BLOB)]:
        c.add(0, off, b"." * 30, t)
    c.add(0, 4, b"." * 30, TREE)          # over: the blob (newest of the old ones) goes first
    assert keys_in_lru(c) == [1, 2, 4]
    c.add(0, 5, b"." * 30, BLOB)          # over, no blob in the list: oldest tree goes
    assert keys_in_lru(c) == [2, 4, 5]
    assert c.stats.evictions == 2


def test_entry_bigger_than_limit_still_added() -> None:
    c = HashmapCache(10, "single")
    c.add(0, 1, b"a" * 5, TREE)
    c.add(0, 2, b"b" * 50, TREE)
    assert keys_in_lru(c) == [2] and c.stats.bytes == 50 and c.stats.peak_bytes == 50
    c = HashmapCache(0, "single")
    c.add(0, 1, b"a", TREE)
    c.add(0, 2, b"b", TREE)
    assert keys_in_lru(c) == [2]


def test_fixed_collision_replaces_slot() -> None:
    c = FixedSlotCache(10**6, "single", 1)
    c.add(0, 1, b"a", TREE)
    c.add(0, 2, b"b", TREE)
    assert c.get(0, 1) is None and c.get(0, 2).data == b"b"
    assert c.stats.collisions == 1 and c.stats.evictions == 0 and keys_in_lru(c) == [2]
    c = FixedSlotCache(10**6, "single", 4096)
    offs = [12, 500, 90000, 123456]
    assert len({pack_entry_hash(7, o) % 4096 for o in offs}) == len(offs)
    for o in offs:
        c.add(7, o, b"z" * o, BLOB)
    assert all(c.get(7, o) is not None for o in offs) and c.stats.collisions == 0


def test_pack_entry_hash_is_gits() -> None:
    h = (0x1000 + 0x2345)
    h += (h >> 8) + (h >> 16)
    assert pack_entry_hash(0x1000, 0x2345) == h


def test_clear() -> None:
    for c in (FixedSlotCache(100, "blob_first", 8), HashmapCache(100, "single")):
        for i in range(20):
            c.add(0, i, b"q" * 7, BLOB if i % 2 else TREE)
        c.clear()
        assert len(c) == 0 and c.stats.bytes == 0 and keys_in_lru(c) == []
