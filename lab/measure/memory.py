"""The memory measure: peak memory of a workload, above the interpreter's own.

Contract: measure_memory(cmd, ...) runs a `python -m lab.worker --memory ...`
command and returns a Memory of the variant. The worker (lab.worker calls
in_worker) builds the time_func (imports, dataset open), collects garbage,
then:

1. baseline: the worker's peak resident set so far (VmHWM of
   /proc/self/status; ru_maxrss where there is no /proc): the interpreter,
   the lab and the build, before the workload;
2. one cold run, time_func(1): the peak afterwards;
3. a separate untimed run under tracemalloc: the peak of Python's traced
   memory inside the timed region, above its level at the region's start
   (the clock marker resets tracemalloc's peak at each region's first clock
   read and reads it at the second; lab.measure.clock).

A flags variant's figure is rss_above = peak - baseline (what the workload
added to the process's peak) and tracemalloc_peak. A peer's (git, our CLI
as a whole process) is its processes' own peak: every process the workload
ran writes its VmHWM at exit (the alloccount preload library,
lab.measure.allocations, without PYTHONMALLOC=malloc); rss_above is the
largest minus a no-op run of the same program (its start-up), as the
instruction and allocation measures subtract one. Sizes are bytes. MEASURE is
the measure in a run (lab.measure.context.Measure): one variant at a time (a busy
machine does not change a peak, but parallel workers would share its RAM), into
<scenario>.<label>.memory.json.
"""
from __future__ import annotations

import gc
import json
import os
import resource
import tempfile
import tracemalloc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyperf

from . import BenchError, PerVariant, run_worker_log
from . import allocations as allocs
from .clock import set_marker

if TYPE_CHECKING:           # annotations only (lab.measure.context)
    from ..scenario import Variant
    from .context import Record, RunContext

LOG_PREFIX = "memory-log "
MEASURE_KEY = "lab_measure"


def peak_rss() -> int:
    """This process's peak resident set so far, bytes (VmHWM, else ru_maxrss)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class _RegionPeak:
    """A clock marker: tracemalloc's peak inside each timed region, above its start."""

    def __init__(self) -> None:
        self.inside = False
        self.start = 0
        self.peak = 0

    def __call__(self) -> None:
        if not self.inside:
            tracemalloc.reset_peak()
            self.start = tracemalloc.get_traced_memory()[0]
        else:
            self.peak = max(self.peak, tracemalloc.get_traced_memory()[1] - self.start)
        self.inside = not self.inside


def in_worker(time_func: Callable[[int], float]) -> str:
    """The worker's protocol (the module doc): its LOG_PREFIX line of figures."""
    gc.collect()
    baseline = peak_rss()
    time_func(1)
    peak = peak_rss()
    region = _RegionPeak()
    tracemalloc.start()
    set_marker(region)
    try:
        time_func(1)
    finally:
        set_marker(None)
        tracemalloc.stop()
    return LOG_PREFIX + json.dumps({"baseline_rss": baseline, "peak_rss": peak,
                                    "tracemalloc_peak": region.peak})


@dataclass
class Memory:
    """A variant's peak memory, bytes (None: not applicable to the variant)."""
    rss_above: int               # the peak the workload added (a peer: its processes')
    peak_rss: int                # the worker's peak (a peer: its largest process's)
    baseline_rss: int            # the worker's peak before the workload (a peer: a no-op run)
    tracemalloc_peak: int | None  # Python's traced peak in the timed region (not for peers)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def measure_memory(cmd: Sequence[str], env: Mapping[str, str] | None = None,
                   children: bool = False) -> Memory:
    """Run the `python -m lab.worker --memory ...` command cmd (the module doc);
    children: the workload runs other programs (a peer): their peak is its figure."""
    with tempfile.TemporaryDirectory(prefix="reftable-lab-mem-") as tmp:
        run_env = (allocs.alloc_env(Path(tmp), env, python_malloc=False) if children
                   else dict(env if env is not None else os.environ))
        pid, fig = run_worker_log(cmd, run_env, LOG_PREFIX, "memory measure")
        totals = {p: t for p, t in allocs.read_totals(Path(tmp)).items() if p != pid}
    if not children:
        return Memory(max(0, fig["peak_rss"] - fig["baseline_rss"]), fig["peak_rss"],
                      fig["baseline_rss"], fig["tracemalloc_peak"])
    if not totals:
        raise BenchError(f"the peer ran no process that reported its memory: {' '.join(cmd)}")
    top = max(totals.values(), key=lambda t: t.maxrss)
    noop = allocs.noop_totals(top.argv0, python_malloc=False).maxrss
    return Memory(max(0, top.maxrss - noop), top.maxrss, noop, None)


def write(path: Path, name: str, mem: Memory, metadata: Mapping[str, Any]) -> None:
    """A pyperf file of benchmark `name`: the peak (unit byte; pyperf's values are
    positive, and rss_above may be 0), the other figures in its metadata."""
    md = {**metadata, "name": name, "unit": "byte", "loops": 1, MEASURE_KEY: "memory",
          **{f"lab_{k}": v for k, v in mem.as_dict().items() if v is not None}}
    run = pyperf.Run([float(mem.peak_rss)], metadata=md, collect_metadata=True)
    pyperf.Benchmark([run]).dump(str(path), replace=True)


def load(path: Path, name: str = "") -> Memory:
    """The Memory of a file write() wrote."""
    suite = pyperf.BenchmarkSuite.load(str(path))
    bench = suite.get_benchmark(name) if name else suite.get_benchmarks()[0]
    md = bench.get_metadata()
    if md.get(MEASURE_KEY) != "memory":
        raise BenchError(f"{path}: not a memory measure")
    tm = md.get("lab_tracemalloc_peak")
    return Memory(int(md["lab_rss_above"]), int(md["lab_peak_rss"]), int(md["lab_baseline_rss"]),
                  None if tm is None else int(tm))


class MemoryMeasure(PerVariant, name="memory", phase=2):
    """The memory measure in a run (see the module doc)."""

    def measure(self, ctx: RunContext, variants: Sequence[Variant], record: Record) -> None:
        for v in variants:
            mem = measure_memory(ctx.worker_cmd(v, "--memory"), env=ctx.env(v),
                                 children=v.peer)
            out = ctx.path(v, "memory")
            write(out, ctx.bench_name(v), mem, ctx.metadata(v))
            record(v.label, {"memory": mem.as_dict(), "memory_json": str(out)})
            ctx.progress(f"memory {v.label}", 1)

    def figures(self, path: Path, benchmark: str) -> dict[str, Any]:
        return {"memory": load(path, benchmark).as_dict()}


MEASURE = MemoryMeasure()
