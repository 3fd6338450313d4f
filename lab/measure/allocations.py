"""The allocations measure: heap allocations and bytes of a workload's timed region.

Contract: one instrument for the Python model and for real git, the
malloc-counting preload library built from lab/measure/c/alloccount.c
(library(): lab.measure.preload, gcc once per source version, into CACHE). It counts valgrind's way: an allocation is every malloc, calloc,
realloc, memalign-family call that returns a block, bytes are the sizes
asked for (the C file's header says exactly what is counted).

count_allocations(cmd, ...) runs a `python -m lab.worker --allocations ...`
command with the library preloaded (LD_PRELOAD), PYTHONMALLOC=malloc (so
every Python object allocation reaches malloc) and PYTHONHASHSEED=0, and
returns the allocations of ONE run of the workload's timed region:

- the worker runs the instruction measure's protocol (lab.worker.count;
  lab.measure.instructions documents it) with the library's snapshots as
  clock marker (alloccount_mark) and segment boundary
  (alloccount_boundary), then prints the snapshot log (LOG_PREFIX line);
  its parts go through lab.measure.instructions.analyse, so start-up,
  imports, build, per-loop set-up and the clock reads cancel as they do for
  instructions: timed(time_func(1)) - timed(time_func(0)).
- a peer's processes (git, our CLI) inherit the preload and write their
  whole-process totals at exit into ALLOCCOUNT_DIR; the count is their sum
  over the warm-up and the counted iteration, halved, minus, per process, a
  no-op run of the same program (instructions.noop_argv), as for
  instructions.

records(params) is the number of records a scenario's parameters name (its
refs, commits or n), the divisor of "allocations per record". MEASURE is the
measure in a run (lab.measure.context.Measure): each variant counted, `jobs` at
once, into <scenario>.<label>.allocations.json.
"""
from __future__ import annotations

import ctypes
import json
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import BenchError, PerVariant, preload, run_worker_log
from . import instructions as counting

if TYPE_CHECKING:           # annotations only (lab.measure.context)
    from ..scenario import Variant
    from .context import Record, RunContext

SOURCE = preload.SOURCES / "alloccount.c"
CACHE = preload.CACHE_ROOT / "alloccount"
DIR_ENV = "ALLOCCOUNT_DIR"
LOG_PREFIX = "alloccount-log "
METRICS = ("allocations", "frees", "bytes_allocated")
_LOG_MAX = 1024          # the C library's ALLOCCOUNT_LOG
_KINDS = {0: counting.MARK, 1: counting.BOUNDARY}


def available() -> bool:
    return preload.available(SOURCE, CACHE)


def library() -> Path:
    """The preload library of the current source (built on first use)."""
    return preload.library(SOURCE, CACHE)


def alloc_env(out_dir: Path, base: Mapping[str, str] | None = None,
              python_malloc: bool = True) -> dict[str, str]:
    """The environment of a counted process: counting.count_env, the preload,
    the directory its processes write their totals into and (python_malloc)
    PYTHONMALLOC=malloc; lab.measure.memory preloads without it, to learn a
    peer's processes' peak memory."""
    env = counting.count_env(base)
    libs = [str(library()), env.get("LD_PRELOAD", "")]
    env.update({"LD_PRELOAD": " ".join(x for x in libs if x), DIR_ENV: str(out_dir)})
    if python_malloc:
        env["PYTHONMALLOC"] = "malloc"
    return env


# -- inside the worker ---------------------------------------------------------------

class Snapshots:
    """The preloaded library's functions, from inside the counted process."""

    def __init__(self) -> None:
        lib = ctypes.CDLL(None)
        try:
            self.mark = lib.alloccount_mark
            self.boundary = lib.alloccount_boundary
            self._log = lib.alloccount_log
        except AttributeError:
            raise BenchError("the alloccount library is not preloaded (LD_PRELOAD)") from None
        self.mark.restype = self.boundary.restype = None
        self.mark.argtypes = self.boundary.argtypes = []
        self._log.restype = ctypes.c_uint64
        self._log.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_uint64]
        self._buf = (ctypes.c_uint64 * (4 * _LOG_MAX))()

    def log_line(self) -> str:
        """The snapshot log as one LOG_PREFIX line: [[kind, allocs, frees, bytes], ...]."""
        n = int(self._log(self._buf, _LOG_MAX))
        if n > _LOG_MAX:
            raise BenchError(f"{n} allocation snapshots, more than the log's {_LOG_MAX}")
        rows = [list(self._buf[4 * i:4 * i + 4]) for i in range(n)]
        return LOG_PREFIX + json.dumps(rows)


# -- in the harness ------------------------------------------------------------------

@dataclass
class Allocs:
    """The allocations of one run of a workload's timed region, and how they were got."""
    allocations: int
    frees: int
    bytes_allocated: int
    parts: dict[str, Any] = field(default_factory=dict)   # the raw counts (pyperf metadata)


def _own(rows: Sequence[Sequence[int]], pid: int) -> dict[str, int]:
    """Each metric of the worker's timed region, by counting.analyse on the log's deltas."""
    out: dict[str, int] = {}
    for i, metric in enumerate(METRICS, 1):
        prev, parts = 0, []
        for number, row in enumerate(rows, 1):
            parts.append(counting.Part(pid, number, _KINDS[row[0]], "", row[i] - prev))
            prev = row[i]
        out[metric] = counting.analyse({pid: parts}, pid).instructions
    return out


@dataclass(frozen=True)
class Totals:
    """One process's totals at its exit (the library's alloc.<pid> file)."""
    counts: tuple[int, int, int]       # allocations, frees, bytes allocated
    maxrss: int                        # peak resident set, bytes
    argv0: str


def read_totals(out_dir: Path) -> dict[int, Totals]:
    """Every process's exit totals in out_dir, by pid."""
    out: dict[int, Totals] = {}
    for path in out_dir.glob("alloc.*"):
        a, f, b, rss, argv0 = path.read_text().rstrip("\n").split(" ", 4)
        out[int(path.name.split(".", 1)[1])] = Totals((int(a), int(f), int(b)),
                                                      int(rss) * 1024, argv0)
    return out


_NOOP_CACHE: dict[tuple[str, bool], Totals] = {}


def noop_totals(program: str, python_malloc: bool = True) -> Totals:
    """The Totals of a no-op run of program (its process start-up), made once."""
    key = (program, python_malloc)
    if key not in _NOOP_CACHE:
        with tempfile.TemporaryDirectory(prefix="reftable-lab-ac-") as d:
            proc = subprocess.Popen(counting.noop_argv(program),
                                    env=alloc_env(Path(d), python_malloc=python_malloc),
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            proc.wait()
            totals = read_totals(Path(d))
            failed = proc.returncode != 0 and not counting.noop_may_fail(program)
            if failed or proc.pid not in totals:
                raise BenchError(f"no allocation totals from a no-op run of {program}")
            _NOOP_CACHE[key] = totals[proc.pid]
    return _NOOP_CACHE[key]


def _children(totals: dict[int, Totals]) -> dict[str, int]:
    sums = [0, 0, 0]
    for t in totals.values():
        noop = noop_totals(t.argv0).counts
        sums = [s + v - n for s, v, n in zip(sums, t.counts, noop)]
    work = [s / 2 for s in sums]          # the warm-up and the counted run spawn them alike
    if work[0] <= 0:
        raise BenchError(f"the child processes allocated nothing beyond a no-op run ({work})")
    return {metric: round(w) for metric, w in zip(METRICS, work)}


def count_allocations(cmd: Sequence[str], env: Mapping[str, str] | None = None,
                      children: bool = False) -> Allocs:
    """Count the `python -m lab.worker --allocations ...` command cmd (see the module
    doc); children: the workload runs other programs (a peer): count those."""
    with tempfile.TemporaryDirectory(prefix="reftable-lab-ac-") as tmp:
        with counting.private_tmpdir(cmd, counting.count_env(env)) as tmpdir:
            pid, log = run_worker_log(cmd, {**alloc_env(Path(tmp), env), "TMPDIR": tmpdir},
                                      LOG_PREFIX, "allocation counting")
        own = _own(log, pid)
        totals = {p: t for p, t in read_totals(Path(tmp)).items() if p != pid}
    parts: dict[str, Any] = {f"lab_worker_{m}": v for m, v in own.items()}
    if children:
        parts["lab_children"] = len(totals)
        counted = _children(totals)
    else:
        counted = own
    parts.update({f"lab_{m}": v for m, v in counted.items()})
    return Allocs(counted["allocations"], counted["frees"], counted["bytes_allocated"], parts)


def records(params: Mapping[str, Any]) -> int | None:
    """The records a scenario's parameters name: refs, else commits, else n (None: none)."""
    for key in ("refs", "commits", "n"):
        if key in params:
            return int(params[key])
    return None


def write(path: Path, name: str, allocs: Allocs, metadata: Mapping[str, Any]) -> None:
    """A pyperf file of benchmark `name`: the allocation count, bytes in its metadata."""
    counting.write_count(path, name, counting.Count(allocs.allocations, allocs.parts),
                         metadata, measure="allocations")


def load(path: Path, name: str = "") -> tuple[float, float]:
    """(allocations, bytes allocated) of a file write() wrote."""
    n, md = counting.load_count_metadata(path, name, measure="allocations")
    return n, float(md["lab_bytes_allocated"])


def count_one(ctx: RunContext, v: Variant) -> Allocs:
    """The allocations of one variant's command."""
    return count_allocations(ctx.worker_cmd(v, "--allocations"), env=ctx.env(v),
                             children=v.peer)


def count_here(ctx: RunContext, todo: Mapping[Any, Variant]) -> dict[Any, Allocs]:
    """The counts of todo (key -> variant) on this machine, `jobs` at once (ctx.each)."""
    out: dict[Any, Allocs] = {}

    def one(item: tuple[Any, Variant]) -> None:
        out[item[0]] = count_one(ctx, item[1])
        ctx.progress(f"allocations {item[1].label}", 1)
    ctx.each(one, list(todo.items()))
    return out


class Allocations(PerVariant, name="allocations", phase=1):
    """The allocation measure in a run (see the module doc)."""

    def missing(self) -> str | None:
        return None if available() else "gcc (to build its preload library)"

    def measure(self, ctx: RunContext, variants: Sequence[Variant], record: Record) -> None:
        library()
        todo = {v.label: v for v in variants}
        if ctx.counter is not None:
            got = ctx.counter.count(ctx, self.name, todo, lambda t: count_here(ctx, t))
        else:
            got = {k: (a, None) for k, a in count_here(ctx, todo).items()}
        for v in variants:
            a, origin = got[v.label]
            out = ctx.path(v, "allocations")
            write(out, ctx.bench_name(v), a, ctx.metadata(v))
            figures: dict[str, Any] = {"allocations": float(a.allocations),
                                       "bytes_allocated": float(a.bytes_allocated),
                                       "allocations_json": str(out)}
            if origin:
                figures["cached"] = {self.name: origin}
            record(v.label, figures)

    def figures(self, path: Path, benchmark: str) -> dict[str, Any]:
        n, b = load(path, benchmark)
        return {"allocations": n, "bytes_allocated": b}


MEASURE = Allocations()
