"""The clock every workload's timed region reads, and its instruction-count marker.

Contract: clock() returns time.perf_counter() seconds. A workload reads it
exactly twice around each timed region (t0 before, t1 after), and reads it
nowhere else. When a marker is installed (set_marker; only the counting
worker, lab.worker --count, does), clock() first calls it; the counting
worker's marker is os.getpgrp, a libc call nothing else in the lab makes, on
which callgrind dumps its counters (--dump-before=getpgrp), so the
instructions between the two reads of each pair are the timed region's.
The allocation and memory workers install theirs the same way
(lab.measure.allocations, lab.measure.memory).
Without a marker clock() is perf_counter plus one test of a global.
"""
from __future__ import annotations

from collections.abc import Callable
from time import perf_counter

_marker: Callable[[], object] | None = None


def set_marker(marker: Callable[[], object] | None) -> None:
    """Install (or, with None, remove) the function clock() calls before reading the time."""
    global _marker
    _marker = marker


def clock() -> float:
    if _marker is not None:
        _marker()
    return perf_counter()
