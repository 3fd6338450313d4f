"""reftable_core.odb: git's object storage -- pack idx, packs, deltas, the delta base
cache (seed 002), loose objects, and walks mirroring git log --raw / -S.

Public API: open_object_store(path, hash_algo=None, flags=Flags()) -> ObjectStore
with has/read/read_header/peel/iter_oids/stats/close.
"""
from .delta import apply_delta
from .delta_cache import CacheStats, FixedSlotCache, HashmapCache, make_delta_cache
from .idx import PackIndex
from .pack import Pack
from .store import ObjectStore, open_object_store

__all__ = [
           "CacheStats",
           "FixedSlotCache",
           "HashmapCache",
           "ObjectStore",
           "Pack",
           "PackIndex",
           "apply_delta",
           "make_delta_cache",
           "open_object_store",
]
