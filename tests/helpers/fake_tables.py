"""Tiny in-memory tables with the TableReader iterator shape, for pq/merged tests."""
from __future__ import annotations

import bisect
from collections.abc import Iterator
from typing import Any

from reftable_core.reftable.record import LogRecord, RefRecord

MAX_U64 = (1 << 64) - 1


def FRef(refname: bytes, update_index: int = 0, value_type: int = 1,  # noqa: N802
         value: bytes | None = None) -> RefRecord:
    """A ref record (the core's own type: the Cython build's merge loops read a queued
    record's fields from its C struct and take no other type)."""
    return RefRecord(refname, update_index, value_type, value)


def FLog(refname: bytes, update_index: int = 0, value_type: int = 1,  # noqa: N802
         message: bytes = b"") -> LogRecord:
    """A log record (key: refname, NUL, MAX_U64 - update_index big-endian)."""
    return LogRecord(refname, update_index, value_type, message=message)


class FakeIter:
    def __init__(self, recs: list[Any]) -> None:
        self.recs = recs
        self.keys = [r.key() for r in recs]
        self.pos = 0

    def seek(self, key: bytes) -> None:
        self.pos = bisect.bisect_left(self.keys, key)

    def seek_ref(self, name: bytes) -> None:
        self.seek(name)

    def __iter__(self) -> Iterator[Any]:
        return self

    def __next__(self) -> Any:
        if self.pos >= len(self.recs):
            raise StopIteration
        r = self.recs[self.pos]
        self.pos += 1
        return r

    def close(self) -> None:
        pass


class FakeTable:
    hash_id = "sha1"                 # Reftable.hash_id is a str (a compiled core checks it)

    def __init__(self, refs: list[Any] = (), logs: list[Any] = (), name: str = "t") -> None:
        self._refs = sorted(refs, key=lambda r: r.key())
        self._logs = sorted(logs, key=lambda r: r.key())
        self.name = name
        uis = [r.update_index for r in [*self._refs, *self._logs]] or [0]
        self.min_update_index = min(uis)
        self.max_update_index = max(uis)

    def refs(self) -> FakeIter:
        return FakeIter(self._refs)

    def logs(self) -> FakeIter:
        return FakeIter(self._logs)

    def seek_ref(self, name: bytes) -> Any | None:
        for r in self._refs:
            if r.refname == name:
                return r
        return None
