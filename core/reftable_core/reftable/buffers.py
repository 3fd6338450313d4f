"""The buffers the table and block writers put each record's key into (flags
writer_scratch, upstream 66ed011bf7, and block_writer_scratch, upstream d94ac23d3b).

Contract: KeyBuffers(scratch) hands out one bytearray per call of its attribute
`take`, for the caller to fill (`buf[:] = key`: git's reftable_buf_reset, then
reftable_buf_add): with scratch False a new empty one each time (git's
`struct reftable_buf key = REFTABLE_BUF_INIT` per record, allocated by its first
fill), with scratch True always the one it keeps (git's `&w->buf`, reset and refilled).
`take` is an itertools iterator's __next__: a C call that makes no Python frame and
tests no flag, the same call for both values, so the two differ in the new object
alone. taken() is how many it has handed out, read from the iterator's length hint
(nothing is counted per call); the table writer adds it to
counters.WORK.<name>_buffers_built (fresh) or _reused (scratch) when it closes.
"""
from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from itertools import repeat, starmap
from typing import Any
from operator import length_hint

_MANY = sys.maxsize      # buffers a source can hand out (its count runs down from here)


class KeyBuffers:
    """A source of key buffers: fresh ones, or one scratch buffer (see the module)."""

    __slots__ = ("_left", "scratch", "take")

    def __init__(self, scratch: bool) -> None:
        self.scratch = scratch
        self._left: Iterator[Any]
        self.take: Callable[[], bytearray]
        if scratch:
            kept = repeat(bytearray(), _MANY)
            self._left = kept
            self.take = kept.__next__
        else:
            calls = repeat((), _MANY)
            self._left = calls
            self.take = starmap(bytearray, calls).__next__      # bytearray() per call

    def taken(self) -> int:
        """The buffers handed out so far (the same one each time under scratch)."""
        return _MANY - length_hint(self._left)
