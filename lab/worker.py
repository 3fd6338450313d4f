"""The one worker entry: times one workload on one dataset with one flags value.

Run by the harness as a subprocess (pyperf's Runner does not run inside a
notebook kernel, and it spawns its own worker processes):

    python -m lab.worker --workload show_ref --gitdir D --params '{..}' \
        --lab-flags 'mmap=off,...' --name NAME [--round R] -o out.json [--fast|--rigorous]

The time_func comes from lab.workloads.build, so each loop's set-up (e.g. a
fresh copy of an empty repository) stays outside the timed region. --round R
(interleaved schedules) records R in every run's metadata (lab.harness.ROUND_KEY).

With --once it runs the workload outside pyperf, pyperf's --loops times (1 by
default), and prints the elapsed seconds: the target for profilers that must
own the interpreter (scalene runs this file as a script).

With --count it is the target of the instruction measure (run under callgrind
by lab.measure.instructions, which documents the protocol): it installs the
clock marker, runs the workload once (warm-up), then closes four segments with
os.getppid(): start-up, an empty clock pair, time_func(0), time_func(1). It
prints nothing, so no varying output (the seconds) changes the count.

With --allocations it is the target of the allocation measure (run with the
alloccount library preloaded by lab.measure.allocations): the same protocol,
the library's snapshots as marker and boundary, then it prints the snapshot
log. With --memory, the memory measure's (lab.measure.memory.in_worker): it
prints the peak figures.
"""
from __future__ import annotations

import gc
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyperf

from lab.measure import memory
from lab.measure.allocations import Snapshots
from lab.measure.clock import clock, set_marker
from lab.measure.instructions import start_instrumentation
from lab.measure.time import ROUND_KEY
from lab.workloads import TimeFunc, build

_OWN_ARGS = ("workload", "gitdir", "params", "lab_flags", "name", "round")


def _add_cmdline_args(cmd: list[str], args: Any) -> None:
    for name in _OWN_ARGS:
        if getattr(args, name) is not None:
            cmd.extend([f"--{name.replace('_', '-')}", str(getattr(args, name))])


def _not_a_worker(loops: int) -> float:
    raise RuntimeError("the pyperf manager spawns workers; it never runs the workload")


def count(time_func: TimeFunc, mark: Callable[[], object] = os.getpgrp,
          boundary: Callable[[], object] = os.getppid,
          start: Callable[[], None] = start_instrumentation) -> None:
    """The counting protocol (see the module doc and lab.measure.instructions).
    After the warm-up a full collection and the instrumentation request (a no-op
    when callgrind instruments from the start) come first, so that the counted
    segments begin from the same state whichever way callgrind was started.
    mark, boundary, start: the allocation measure's snapshots instead."""
    set_marker(mark)
    time_func(1)
    gc.collect()
    start()
    boundary()
    clock()
    clock()
    boundary()
    time_func(0)
    boundary()
    time_func(1)
    boundary()
    set_marker(None)


def count_allocations(time_func: TimeFunc) -> None:
    """The counting protocol on the alloccount library's snapshots; prints its log."""
    snaps = Snapshots()
    count(time_func, snaps.mark, snaps.boundary, lambda: None)
    print(snaps.log_line())


def main() -> int:
    runner = pyperf.Runner(add_cmdline_args=_add_cmdline_args)
    runner.argparser.add_argument("--workload", required=True)
    runner.argparser.add_argument("--gitdir", required=True)
    runner.argparser.add_argument("--params", default="{}")
    runner.argparser.add_argument("--lab-flags", default="")
    runner.argparser.add_argument("--name", default=None)
    runner.argparser.add_argument("--round", type=int, default=None,
                                  help="the interleaved round these runs belong to")
    runner.argparser.add_argument("--once", action="store_true",
                                  help="run --loops times (default 1) outside pyperf, print "
                                       "the seconds")
    runner.argparser.add_argument("--count", action="store_true",
                                  help="the instruction measure's target (under callgrind): "
                                       "warm-up, then 0 and 1 runs between os.getppid() marks")
    runner.argparser.add_argument("--allocations", action="store_true",
                                  help="the allocation measure's target (alloccount preloaded)")
    runner.argparser.add_argument("--memory", action="store_true",
                                  help="the memory measure's target: peak RSS, tracemalloc peak")
    args = runner.parse_args()
    time_func: TimeFunc = _not_a_worker
    if args.once or args.count or args.worker or args.allocations or args.memory:
        time_func = build(args.workload, args.lab_flags, Path(args.gitdir),
                          json.loads(args.params))
    if args.count:
        count(time_func)
        return 0
    if args.allocations:
        count_allocations(time_func)
        return 0
    if args.memory:
        print(memory.in_worker(time_func))
        return 0
    if args.once:
        loops = args.loops or 1
        print(f"{args.workload}: {time_func(loops):.6f} s for {loops} loop(s)", file=sys.stderr)
        return 0
    runner.metadata["lab_workload"] = args.workload
    runner.metadata["lab_flags"] = args.lab_flags
    if args.round is not None:
        runner.metadata[ROUND_KEY] = args.round
    runner.bench_time_func(args.name or args.workload, time_func)
    return 0


if __name__ == "__main__":
    sys.exit(main())
