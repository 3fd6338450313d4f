"""The iterator protocol and the table interface (git's reftable/iter.h; JGit's Reftable).

Contract. RecordIter: every record iterator (a table section's, a merged
table's) has one shape, git's seek / next / close:
  seek(key) positions before the first record with key >= key and returns the
      iterator (git's iterator_seek); an iterator never sought starts at the
      beginning of its records;
  next(it) / `for rec in it` yields records in key order (iter(it) may hand out
      the underlying generator, so that a for loop runs without a Python-level
      __next__ per record);
  close() releases what the iterator holds.
seek_ref(name) and seek_log(name, update_index) are seek() on a ref / log key,
written here once.
Reftable: a single table (table.TableReader) and a stack seen as one
(merged.MergedTable) share one interface: hash_id, min_update_index,
max_update_index, refs() and logs() (fresh RecordIters), and on top of them
iter_refs(prefix) and iter_logs(name).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import Any

from .basics import MAX_U64
from .record import log_key


class RecordIter(Iterator[Any]):
    """A record iterator with seek(key) (see the module contract)."""

    __slots__ = ()

    @abstractmethod
    def seek(self, key: bytes) -> RecordIter:
        """Position before the first record with key >= key; returns self."""

    @abstractmethod
    def close(self) -> None:
        """Release the iterator's resources (its generator, its sub-iterators)."""

    def seek_ref(self, name: bytes) -> RecordIter:
        return self.seek(name)

    def seek_log(self, name: bytes, update_index: int = MAX_U64) -> RecordIter:
        """Position at ref name's log entries at or below update_index (newest first)."""
        return self.seek(log_key(name, update_index))


class Reftable(ABC):
    """What one table and a merged stack of tables both offer."""

    hash_id: str | None      # None only for a merged table of no tables given no hash_id
    min_update_index: int
    max_update_index: int

    @abstractmethod
    def refs(self) -> RecordIter:
        """A fresh iterator over the ref records."""

    @abstractmethod
    def logs(self) -> RecordIter:
        """A fresh iterator over the log records."""

    def iter_refs(self, prefix: bytes = b"") -> Iterator[Any]:
        """The records of refs() whose name starts with prefix, in name order."""
        for rec in self.refs().seek_ref(prefix):
            if not rec.refname.startswith(prefix):
                break
            yield rec

    def iter_logs(self, name: bytes) -> Iterator[Any]:
        """The records of logs() for ref `name`, newest first."""
        for rec in self.logs().seek_log(name):
            if rec.refname != name:
                break
            yield rec
