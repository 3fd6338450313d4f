"""Tiny in-memory tables with the TableReader iterator shape, for pq/merged tests."""
from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

MAX_U64 = (1 << 64) - 1


@dataclass(slots=True)
class FRef:
    refname: bytes
    update_index: int = 0
    value_type: int = 1
    value: bytes | None = None

    def key(self) -> bytes:
        return bytes(bytearray(self.refname))


@dataclass(slots=True)
class FLog:
    refname: bytes
    update_index: int = 0
    value_type: int = 1
    message: bytes = b""

    def key(self) -> bytes:
        return self.refname + b"\0" + (MAX_U64 - self.update_index).to_bytes(8, "big")


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
