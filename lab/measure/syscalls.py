"""The syscalls measure: the exact system calls of a workload's timed region, per call.

Contract: count_syscalls(cmd, ...) runs a `python -m lab.worker --syscalls ...`
command under `strace -f -ff -qq -o DIR/sc` (one trace file per process) and
returns, per system call name, how many calls ONE run of the workload's timed
region made (failed calls included: an openat that gives ENOENT is a call),
and their total:

- the worker runs the instruction measure's protocol (lab.worker.count;
  lab.measure.instructions documents it) with its own markers, which are
  system calls: every clock() read is a getpgrp, every segment boundary a
  getppid (nothing else in the lab makes either). The worker's trace is cut at
  those calls into parts and each call name's counts go through
  lab.measure.instructions.analyse, so the interpreter's start-up, imports,
  the build, the warm-up, each loop's set-up (a fresh repository copy) and the
  clock reads cancel: what is counted is timed(time_func(1)) -
  timed(time_func(0)), the markers themselves never.
- a workload that runs programs (a peer: git, dulwich, our CLI) is counted by
  those processes: each process the worker spawned inside a timed region of
  time_func(1) (the clone/vfork that made it lies in that region of the
  worker's trace), and every process it spawned in turn, from its successful
  execve on; minus, per exec'd process, a no-op run of the same program
  (instructions.noop_argv) under strace, counted the same way: the program's
  start-up (dynamic linking, libc, main's set-up) cancels, what is left is the
  command's own work, repository discovery and config reading included (a
  call the no-op run makes more often than the command, git --version's
  futex, is a negative count: the difference is exact either way). The
  Python parent's spawning (the fork, its pre-exec calls, the wait) is the
  harness's and is not counted; nor are the execve calls themselves.

Counts do not depend on the machine's load, and two runs of one command give
the same counts: the worker runs in instructions.count_env (hash seed, detrand)
and a private TMPDIR, as the instruction measure's does. write() stores the
total as a pyperf benchmark (unit "integer", lab_measure="syscalls") with the
per-call counts in its metadata (lab_syscalls_by_call, JSON), load() reads them
back. MEASURE is the measure in a run: each variant counted, `jobs` at once, into
<scenario>.<label>.syscalls.json.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import BenchError, PerVariant
from . import instructions as counting

if TYPE_CHECKING:           # annotations only (lab.measure.context)
    from ..scenario import Variant
    from .context import Record, RunContext

STRACE = "strace"
MARK, BOUNDARY = counting.MARK, counting.BOUNDARY     # getpgrp, getppid: system calls
SPAWNS = frozenset({"clone", "clone3", "vfork", "fork"})
BY_CALL_KEY = "lab_syscalls_by_call"
# the calls the result model names one by one (lab.results.METRICS: syscalls-<call>)
CALLS = ("openat", "read", "pread64", "mmap", "munmap", "fstat", "newfstatat", "statx",
         "lseek", "close", "write", "rename")

_LINE = re.compile(r"([a-z_][a-z0-9_]*)\((.*)\)\s+=\s+(-?\d+|\?|0x[0-9a-f]+)")
_UNFINISHED = re.compile(r"([a-z_][a-z0-9_]*)\((.*)<unfinished \.\.\.>$")
_RESUMED = re.compile(r"<\.\.\. ([a-z_][a-z0-9_]*) resumed>.*=\s+(-?\d+|\?)")


def available() -> bool:
    return shutil.which(STRACE) is not None


@dataclass(frozen=True)
class Call:
    """One system call of a trace: its name, its arguments' text, its result (None: ?)."""
    name: str
    args: str
    result: int | None


def _result(text: str) -> int | None:
    if text == "?":
        return None
    return int(text, 16) if text.startswith("0x") else int(text)


def parse_trace(path: Path) -> list[Call]:
    """The calls of one process's trace file (strace -ff), in order; signal and exit
    lines skipped; a call strace split (unfinished, resumed) is one call."""
    calls: list[Call] = []
    pending: dict[str, str] = {}
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith(("---", "+++")):
            continue
        m = _LINE.match(line)
        if m:
            calls.append(Call(m.group(1), m.group(2), _result(m.group(3))))
            continue
        u = _UNFINISHED.match(line)
        if u:
            pending[u.group(1)] = u.group(2)
            continue
        r = _RESUMED.match(line)
        if r:
            calls.append(Call(r.group(1), pending.pop(r.group(1), ""), _result(r.group(2))))
    return calls


def read_traces(out_dir: Path) -> dict[int, list[Call]]:
    """Every process's calls in out_dir (files sc.<pid>), by pid."""
    return {int(p.name.split(".", 1)[1]): parse_trace(p) for p in out_dir.glob("sc.*")}


def strace_argv(out_dir: Path) -> list[str]:
    return [STRACE, "-f", "-ff", "-qq", "-o", f"{out_dir}/sc"]


def _after_exec(calls: Sequence[Call]) -> tuple[str, list[Call]]:
    """(the program of the process's first successful execve, its calls after it);
    ("", every call) for a process that never exec'd (a fork of its parent)."""
    for i, c in enumerate(calls):
        if c.name == "execve" and c.result == 0:
            return c.args.split('"', 2)[1], list(calls[i + 1:])
    return "", list(calls)


# -- the worker's own region ---------------------------------------------------------

def _walk(calls: Sequence[Call]) -> Iterator[tuple[int, bool, Call]]:
    """(segment, inside a timed region?, call) of each call that is not a marker."""
    seg, inside = 0, False
    for c in calls:
        if c.name == BOUNDARY:
            seg, inside = seg + 1, False
        elif c.name == MARK:
            inside = not inside
        else:
            yield seg, inside, c


Key = Callable[[Call], str]          # what a call is counted as (default: its name)


def by_name(c: Call) -> str:
    return c.name


def own_counts(calls: Sequence[Call], pid: int, key: Key = by_name) -> dict[str, int]:
    """Each call key's count in the worker's timed region (counting.analyse on the
    parts between markers: the protocol's segments, clock pairs subtracted)."""
    names = sorted({key(c) for c in calls if c.name not in (MARK, BOUNDARY)})
    parts: list[tuple[str, Counter[str]]] = [("", Counter())]
    for c in calls:
        if c.name in (MARK, BOUNDARY):
            parts.append((c.name, Counter()))
        else:
            parts[-1][1][key(c)] += 1
    # a part is what came before its dump: the trigger closes it
    closed = [(parts[i + 1][0], parts[i][1]) for i in range(len(parts) - 1)]
    closed.append(("", parts[-1][1]))
    out: dict[str, int] = {}
    for name in names:
        seq = [counting.Part(pid, n, trig, "", cnt[name]) for n, (trig, cnt) in
               enumerate(closed, 1)]
        value = counting.analyse({pid: seq}, pid).instructions
        if value:
            out[name] = value
    return out


# -- the processes it ran --------------------------------------------------------------

_NOOP_CACHE: dict[str, list[Call]] = {}


def noop_calls(program: str) -> list[Call]:
    """The calls of a no-op run of program after its execve (every process), made once."""
    if program not in _NOOP_CACHE:
        with tempfile.TemporaryDirectory(prefix="reftable-lab-sc-") as d:
            proc = subprocess.run([*strace_argv(Path(d)), *counting.noop_argv(program)],
                                  env=counting.count_env(), stdin=subprocess.DEVNULL,
                                  capture_output=True, check=False)
            traces = read_traces(Path(d))
        if (proc.returncode != 0 and not counting.noop_may_fail(program)) or not traces:
            raise BenchError(f"no system call trace of a no-op run of {program}: "
                             f"{proc.stderr[-300:]!r}")
        _NOOP_CACHE[program] = [c for calls in traces.values() for c in _after_exec(calls)[1]]
    return _NOOP_CACHE[program]


def _spawned(calls: Sequence[Call]) -> Iterator[int]:
    for c in calls:
        if c.name in SPAWNS and c.result is not None and c.result > 0:
            yield c.result


def children_counts(traces: Mapping[int, Sequence[Call]], top: int, key: Key = by_name
                    ) -> tuple[Counter[str], int]:
    """(each call's count, processes) of the processes the worker spawned inside the
    timed regions of its counted segment (time_func(1)) and their descendants, each
    from its execve on, minus its program's no-op run; those of time_func(0) subtracted
    alike (it runs no loop: none, normally)."""
    sign: dict[int, int] = {}
    for seg, inside, c in _walk(traces[top]):
        if inside and seg in (2, 3) and c.name in SPAWNS and c.result and c.result > 0:
            sign[c.result] = 1 if seg == 3 else -1
    todo = list(sign)
    while todo:
        pid = todo.pop()
        for child in _spawned(traces.get(pid, ())):
            sign[child] = sign[pid]
            todo.append(child)
    total: Counter[str] = Counter()
    for pid, s in sign.items():
        if pid not in traces:
            raise BenchError(f"no system call trace of process {pid}")
        program, calls = _after_exec(traces[pid])
        mine = Counter(key(c) for c in calls)
        if program:
            mine.subtract(Counter(key(c) for c in noop_calls(program)))
        for name, n in mine.items():
            total[name] += s * n
    return Counter({k: v for k, v in total.items() if v}), len(sign)


# -- in the harness ------------------------------------------------------------------

@dataclass
class Syscalls:
    """The system calls of one run of a workload's timed region, and how they were got."""
    by_call: dict[str, int]
    parts: dict[str, Any] = field(default_factory=dict)   # the raw counts (pyperf metadata)

    @property
    def total(self) -> int:
        return sum(self.by_call.values())


def count_traces(traces: Mapping[int, Sequence[Call]], top: int, children: bool,
                 key: Key = by_name) -> Syscalls:
    """The Syscalls of a counting worker's traces (top: its pid; children: count the
    processes it ran, a peer's, instead of its own calls; key: what a call counts as,
    e.g. "openat tables.list" for the opens of one file)."""
    if top not in traces:
        raise BenchError(f"no system call trace of the worker (pid {top})")
    own = own_counts(traces[top], top, key)
    parts: dict[str, Any] = {"lab_worker_syscalls": sum(own.values())}
    if not children:
        return Syscalls(dict(sorted(own.items())), parts)
    counted, procs = children_counts(traces, top, key)
    if procs == 0 or sum(counted.values()) <= 0:
        raise BenchError(f"the child processes made no system call beyond a no-op run "
                         f"({procs} processes)")
    parts["lab_children"] = procs
    return Syscalls(dict(sorted(counted.items())), parts)


def count_syscalls(cmd: Sequence[str], env: Mapping[str, str] | None = None,
                   children: bool = False, keep: Path | None = None,
                   key: Key = by_name) -> Syscalls:
    """Count the `python -m lab.worker --syscalls ...` command cmd (see the module doc);
    keep: a directory to leave the trace files in (default: a temporary one); key:
    what each call counts as (count_traces)."""
    if not available():
        raise BenchError("counting system calls needs strace")
    with tempfile.TemporaryDirectory(prefix="reftable-lab-sc-") as tmp:
        out_dir = Path(keep) if keep else Path(tmp)
        out_dir.mkdir(parents=True, exist_ok=True)
        for old in out_dir.glob("sc.*"):
            old.unlink()
        worker_env = counting.count_env(env)
        with counting.private_tmpdir(cmd, worker_env) as tmpdir:
            proc = subprocess.Popen([*strace_argv(out_dir), *cmd],
                                    env={**worker_env, "TMPDIR": tmpdir},
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                    text=True)
            _, err = proc.communicate()
        if proc.returncode != 0:
            raise BenchError(f"counting system calls failed ({proc.returncode}): "
                             f"{' '.join(cmd)}\n{err[-4000:]}")
        traces = read_traces(out_dir)
    # strace runs the worker as its own child: the worker is the process that made
    # the boundary calls
    tops = [pid for pid, calls in traces.items() if any(c.name == BOUNDARY for c in calls)]
    if len(tops) > 1:       # a program the workload ran called getppid too
        tops = [pid for pid in tops
                if any(c.name == "execve" and '"lab.worker"' in c.args for c in traces[pid])]
    if len(tops) != 1:
        raise BenchError(f"{len(tops)} processes made the boundary calls, not one")
    return count_traces(traces, tops[0], children, key)


def write(path: Path, name: str, sc: Syscalls, metadata: Mapping[str, Any]) -> None:
    """A pyperf file of benchmark `name`: the total, the per-call counts in its metadata."""
    counting.write_count(path, name, counting.Count(sc.total, {
        **sc.parts, BY_CALL_KEY: json.dumps(sc.by_call, sort_keys=True)}),
        metadata, measure="syscalls")


def load(path: Path, name: str = "") -> tuple[float, dict[str, int]]:
    """(total, per-call counts) of a file write() wrote."""
    n, md = counting.load_count_metadata(path, name, measure="syscalls")
    return n, {k: int(v) for k, v in json.loads(md[BY_CALL_KEY]).items()}


class SyscallsMeasure(PerVariant, name="syscalls", phase=4):
    """The system call measure in a run (see the module doc)."""

    def missing(self) -> str | None:
        return None if available() else "strace (apt-get install strace)"

    def measure(self, ctx: RunContext, variants: Sequence[Variant], record: Record) -> None:
        def one(v: Variant) -> None:
            sc = count_syscalls(ctx.worker_cmd(v, "--syscalls"), env=ctx.env(v),
                                children=v.peer)
            out = ctx.path(v, "syscalls")
            write(out, ctx.bench_name(v), sc, ctx.metadata(v))
            record(v.label, {"syscalls": float(sc.total), "syscalls_by_call": sc.by_call,
                             "syscalls_json": str(out)})
            ctx.progress(f"syscalls {v.label}", 1)
        ctx.each(one, variants)

    def figures(self, path: Path, benchmark: str) -> dict[str, Any]:
        total, by_call = load(path, benchmark)
        return {"syscalls": total, "syscalls_by_call": by_call}


MEASURE = SyscallsMeasure()
