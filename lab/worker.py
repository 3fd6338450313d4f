"""The one worker entry: times one workload on one dataset with one flags value.

Run by the harness as a subprocess (pyperf's Runner does not run inside a
notebook kernel, and it spawns its own worker processes):

    python -m lab.worker --workload show_ref --gitdir D --params '{..}' \
        --lab-flags 'mmap=off,...' --name NAME [--round R] -o out.json [--fast|--rigorous]

The time_func comes from lab.workloads.build, so each loop's set-up (e.g. a
fresh copy of an empty repository) stays outside the timed region. --round R
(interleaved schedules) records R in every run's metadata (lab.measure.time.ROUND_KEY).

With --once it runs the workload outside pyperf, pyperf's --loops times (1 by
default), and prints the elapsed seconds: the target for profilers that must
own the interpreter (scalene runs this file as a script).

With --count it is the target of the instruction measure (run under callgrind
by lab.measure.instructions, which documents the protocol): before the build
it lets the programs it will run be instrumented from their start
(instrument_children), then it installs the clock marker, runs the workload
once (warm-up), then closes four segments with os.getppid(): start-up, an
empty clock pair, time_func(0), time_func(1). It prints nothing, so no varying
output (the seconds) changes the count.

With --allocations it is the target of the allocation measure (run with the
alloccount library preloaded by lab.measure.allocations): the same protocol,
the library's snapshots as marker and boundary, then it prints the snapshot
log. With --syscalls, the system call measure's (run under strace by
lab.measure.syscalls): the same protocol on its own markers, os.getpgrp and
os.getppid being system calls, no instrumentation request. With --memory, the memory measure's (lab.measure.memory.in_worker): it
prints the peak figures.
With --work OUT it is the work pass (untimed, after the measures): it runs
the workload once (warm-up), resets reftable_core.counters, runs it once more
and writes {"work": counters.snapshot()} to OUT; with --trace-loops also
"loop_bytecodes": the bytecodes executed in the generated hot loops
(reftable/loops.py) during a third run under sys.settrace opcode events: the
per-record work of the loops the flags study, counted without a line added to
them (the trace slows that run some 20-fold; it is never timed). In a compiled
build (mypyc, Cython) the loops run no bytecode: there is no loop_bytecodes, so
the rows those flags study are not told "no difference in work" on a count of 0.
"""
from __future__ import annotations

import gc
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import pyperf
from reftable_core import counters
from reftable_core.reftable import loops

from lab.measure import memory
from lab.measure.allocations import Snapshots
from lab.measure.clock import clock, set_marker
from lab.measure.instructions import instrument_children, start_instrumentation
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


def loop_bytecodes(run: Callable[[], object], filename: str = loops.__file__) -> int:
    """Bytecodes executed in code from `filename` while run() runs (sys.settrace with
    opcode events on those frames only; every other frame runs untraced)."""
    n = 0

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal n
        if event == "opcode":
            n += 1
        return local

    def on_call(frame: FrameType, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename != filename:
            return None
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        return local

    sys.settrace(on_call)
    try:
        run()
    finally:
        sys.settrace(None)
    return n


def work(time_func: TimeFunc, trace_loops: bool = True) -> dict[str, int]:
    """The work pass (see the module doc): counters of one run after a warm-up,
    and (trace_loops) the hot loops' bytecodes of another."""
    time_func(1)
    counters.reset()
    time_func(1)
    out = counters.snapshot()
    if trace_loops and loops_run_bytecode():
        out["loop_bytecodes"] = loop_bytecodes(lambda: time_func(1))
    return out


def loops_run_bytecode() -> bool:
    """Whether the hot loops are interpreted (loops.py, not a compiled extension)."""
    return (loops.__file__ or "").endswith(".py")


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
    runner.argparser.add_argument("--syscalls", action="store_true",
                                  help="the system call measure's target (under strace): the "
                                       "instruction protocol, its markers being system calls")
    runner.argparser.add_argument("--memory", action="store_true",
                                  help="the memory measure's target: peak RSS, tracemalloc peak")
    runner.argparser.add_argument("--work", default=None, metavar="OUT",
                                  help="the untimed work pass: write the work counters of "
                                       "one run to OUT (JSON)")
    runner.argparser.add_argument("--trace-loops", action="store_true",
                                  help="with --work: count the hot loops' bytecodes too")
    args = runner.parse_args()
    time_func: TimeFunc = _not_a_worker
    if args.count:
        instrument_children()
    if args.once or args.count or args.work or args.worker or args.allocations or args.memory\
            or args.syscalls:
        time_func = build(args.workload, args.lab_flags, Path(args.gitdir),
                          json.loads(args.params))
    if args.count:
        count(time_func)
        return 0
    if args.allocations:
        count_allocations(time_func)
        return 0
    if args.syscalls:
        count(time_func, start=lambda: None)
        return 0
    if args.memory:
        print(memory.in_worker(time_func))
        return 0
    if args.work:
        Path(args.work).write_text(json.dumps({"work": work(time_func, args.trace_loops)},
                                              indent=1))
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
