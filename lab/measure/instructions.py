"""The instructions measure: exact work counts of a workload under callgrind.

Contract: count_worker(cmd, ...) runs a `python -m lab.worker --count ...`
command under `valgrind --tool=callgrind` and returns the instructions
(callgrind's Ir) of ONE run of the workload's timed region, the region wall
time measures, and nothing else:

- the counting worker (lab.worker --count) builds the time_func, runs it
  once (a warm-up: lazy imports, caches), collects garbage, switches
  callgrind's instrumentation on (a client request: the worker runs under
  --instr-atstart=no, at the none tool's speed until then; the programs it
  runs, a peer's, are instrumented from their start: uninstrumented_env), then,
  each segment closed by
  os.getppid() (a callgrind dump, --dump-before=getppid):
  seg 1 one empty clock pair, seg 2 time_func(0), seg 3 time_func(1).
  Every clock() read also dumps (the marker os.getpgrp, lab.measure.clock),
  so a segment's parts alternate: outside a timed region, inside one, ...
- the count = timed(seg 3) - timed(seg 2), each minus its clock pairs' cost
  (seg 1). So the interpreter's start-up, the imports, the dataset open,
  the build and every per-loop set-up outside the timed region (a fresh
  repository copy) cancel exactly: what is left is the workload's own work.
- a workload that runs other programs (peers: git, our CLI as a whole
  process) is counted by those processes (--trace-children=yes, one file per
  pid): their instructions per iteration (warm-up and counted iteration each
  spawn them; the sum is halved) minus, per process, the count of a no-op
  run of the same program (`git --version`; for a Python, `python -c pass`):
  the program's process start-up (exec, dynamic linking, libc and main's
  set-up; for Python, the bare interpreter) cancels as the worker's does,
  and what remains is the command's own work, its repository discovery and
  config reading included (as open_repo is in ours). The lab's own spawning
  of the process (the Python parent's subprocess.run) is the harness's cost,
  not the peer's, and is left out (it is kept in the metadata).

Counts do not depend on the machine's load, and two runs of one command give
the same count to the instruction: every counted process runs in count_env
(PYTHONHASHSEED=0; the detrand preload library, lab/measure/c/detrand.c, in
place of the system's randomness: getrandom and /dev/urandom give one fixed
stream; the pytest-varying variables dropped) and, by private_tmpdir, with a
TMPDIR of its own whose path is a function of the command alone (emptied
first, one count of a command at a time). Without these, random table and
temporary names (same length, other bytes) made dict probes and string
compares differ by a few thousand instructions per run. A count is the
median of the command's counts in three memory layouts (LAYOUTS: a padding
variable of three lengths; one layout in a few dozen costs a percent more in
CPython's allocator, see LAYOUTS). write_count()
stores one as a pyperf benchmark (unit "integer", one value, metadata
lab_measure="instructions" plus the raw parts), load_count() reads it back.
"""
from __future__ import annotations

import ctypes
import fcntl
import hashlib
import importlib.util
import json
import mmap
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyperf

from . import BenchError, PerVariant, preload, run_command

if TYPE_CHECKING:           # annotations only (lab.measure.context)
    from ..scenario import Variant
    from .context import Record, RunContext

VALGRIND = "valgrind"
MARK = "getpgrp"          # clock() reads (lab.measure.clock's marker: os.getpgrp)
BOUNDARY = "getppid"      # segment ends in the counting worker (os.getppid)
MEASURE_KEY = "lab_measure"


# Callgrind's client request CALLGRIND_START_INSTRUMENTATION (valgrind/callgrind.h:
# VG_USERREQ_TOOL_BASE('C', 'T') + 4), issued by valgrind's magic x86-64 sequence
# (four rotations of rdi summing to 128 bits, then xchg rbx, rbx; rax points to the
# request's arguments): a no-op on a real CPU, a request under valgrind.
_START_INSTRUMENTATION = 0x43540004
_CLIENT_REQUEST = bytes.fromhex(
    "4889f8"                                    # mov rax, rdi (the argument block)
    "31d2"                                      # xor edx, edx (the default result)
    "48c1c703" "48c1c70d" "48c1c73d" "48c1c733"  # rol rdi, 3 / 13 / 61 / 51
    "4887db"                                    # xchg rbx, rbx
    "4889d0"                                    # mov rax, rdx
    "c3")                                       # ret


def client_requests_supported() -> bool:
    return platform.machine() in ("x86_64", "AMD64")


def start_instrumentation() -> None:
    """Switch callgrind's instrumentation on (the worker ran with --instr-atstart=no,
    at the speed of valgrind's none tool, through its start-up and warm-up)."""
    code = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    code.write(_CLIENT_REQUEST)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(code))
    request = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_void_p)(addr)
    args = (ctypes.c_uint64 * 6)(_START_INSTRUMENTATION, 0, 0, 0, 0, 0)
    request(ctypes.addressof(args))
    del request


DETRAND = preload.SOURCES / "detrand.c"
DETRAND_CACHE = preload.CACHE_ROOT / "detrand"


def available() -> bool:
    """valgrind, and the detrand library (built, or gcc to build it): without it
    counts would not repeat."""
    return shutil.which(VALGRIND) is not None and preload.available(DETRAND, DETRAND_CACHE)


PYCACHE = preload.CACHE_ROOT / "pycache"
# the variables a counted process is given (the rest of the caller's environment is
# dropped): a process's count depends on the size of its environment (the strings
# sit at the top of its stack, os.environ copies them onto the heap), so an ambient
# variable (OLDPWD after a `cd`, a shell's `_`, MAKEFLAGS, PYTEST_CURRENT_TEST) moved
# counts by hundreds to tens of thousands of instructions between two runs of one
# command. Exact names, then prefixes.
COUNT_ENV_NAMES = frozenset({"PATH", "HOME", "LANG", "LC_ALL", "TZ", "PYTHONPATH",
                             "PYTHONHASHSEED", "PYTHONPYCACHEPREFIX", "PYTHONSAFEPATH", "LD_PRELOAD",
                             "LD_LIBRARY_PATH", "VIRTUAL_ENV", "TMPDIR", "VALGRIND_OPTS"})
COUNT_ENV_PREFIXES = ("GIT_", "REFTABLE_LAB_", "ALLOCCOUNT_")
# variables whose value differs between two runs of one command (pytest names the
# running test and its phase in it): never passed to a counted process
VOLATILE_ENV = frozenset({"PYTEST_CURRENT_TEST", "PYTHONDONTWRITEBYTECODE"})


def counted_variable(name: str) -> bool:
    """Whether a variable of the caller's environment reaches a counted process."""
    return name not in VOLATILE_ENV and (name in COUNT_ENV_NAMES
                                         or name.startswith(COUNT_ENV_PREFIXES))


def count_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of every counted process (base: os.environ): only the
    variables counted_variable() keeps (so the same command has the same
    environment, to the byte, whatever shell started the run); hash
    randomization off; the detrand library preloaded (ahead of base's LD_PRELOAD)
    when it can be had (available()); byte-code written to and
    read from PYCACHE (PYTHONPYCACHEPREFIX), even where PYTHONDONTWRITEBYTECODE
    is set: compiling every module at each start-up would cost a worker under
    callgrind more than its workload (the start-up is not counted either way)."""
    env = {k: v for k, v in (os.environ if base is None else base).items()
           if counted_variable(k)}
    env.update(PYTHONHASHSEED="0", PYTHONPYCACHEPREFIX=str(PYCACHE))
    if preload.available(DETRAND, DETRAND_CACHE):
        libs = [str(preload.library(DETRAND, DETRAND_CACHE)), env.get("LD_PRELOAD", "")]
        env["LD_PRELOAD"] = " ".join(x for x in libs if x)
    return env


# the packages whose byte-code a counted process may load: the worker's and a CLI
# peer's (lab.cli imports every command module)
PACKAGES = ("lab", "reftable_core", "data_gen")


def compile_packages(env: Mapping[str, str] | None = None) -> None:
    """Byte-compile PACKAGES into PYCACHE, in the counted processes' environment,
    before they start: a process that compiles a module on import (its source
    changed since) has another heap afterwards, and a count several thousand
    instructions off."""
    dirs = [loc for name in PACKAGES if (spec := importlib.util.find_spec(name))
            for loc in (spec.submodule_search_locations or [])]
    run_command([sys.executable, "-m", "compileall", "-q", *dirs], env=count_env(env))


SCRATCH_ROOT = Path(tempfile.gettempdir()) / "reftable-lab-count"


@contextmanager
def private_tmpdir(cmd: Sequence[str], env: Mapping[str, str]) -> Iterator[str]:
    """A TMPDIR for one count of cmd in env, made empty: a directory of this
    command's own, the same path whenever the same command (argv and environment)
    is counted, so the worker's temporary names (deterministic under detrand) are
    the same bytes in every run, and never taken by a concurrent count (another
    command: another directory; the same command: it waits for the lock)."""
    key = hashlib.sha256(json.dumps([list(cmd), sorted(env.items())]).encode()).hexdigest()
    tmp = SCRATCH_ROOT / key[:16]
    SCRATCH_ROOT.mkdir(parents=True, exist_ok=True)
    with open(SCRATCH_ROOT / f"{key[:16]}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        try:
            yield str(tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def callgrind_argv(out_dir: Path) -> list[str]:
    """Instrumented from the start, unless the environment's VALGRIND_OPTS says
    otherwise (uninstrumented_env)."""
    return [VALGRIND, "--tool=callgrind", "-q", "--trace-children=yes",
            f"--dump-before={MARK}", f"--dump-before={BOUNDARY}",
            f"--callgrind-out-file={out_dir}/cg.%p"]


VALGRIND_OPTS = "VALGRIND_OPTS"


def uninstrumented_env(env: Mapping[str, str]) -> dict[str, str]:
    """env for a counting worker that starts uninstrumented (at the speed of
    valgrind's none tool, through its start-up and imports) and switches
    instrumentation on itself (start_instrumentation) before it counts. The
    option is in VALGRIND_OPTS, not on the command line: valgrind passes its
    command line to the programs a traced process execs, but each of them reads
    VALGRIND_OPTS from its own environment, so once the worker has dropped it
    (instrument_children) the processes it runs (a peer's git) are instrumented
    from their start, as their no-op runs are."""
    return {**env, VALGRIND_OPTS: "--instr-atstart=no"}


def instrument_children() -> None:
    """In the counting worker, before it builds the workload (which may copy
    os.environ for its processes): the programs it runs from now on are
    instrumented from their start (see uninstrumented_env)."""
    os.environ.pop(VALGRIND_OPTS, None)


@dataclass(frozen=True)
class Part:
    """One callgrind dump of one process: the instructions since the previous dump."""
    pid: int
    number: int
    trigger: str           # "getpgrp", "getppid", "" (program termination)
    cmd: str
    ir: int


def read_parts(out_dir: Path) -> dict[int, list[Part]]:
    """Every dump in out_dir, per pid, in dump order."""
    procs: dict[int, list[Part]] = {}
    for path in out_dir.glob("cg.*"):
        pid = number = trigger = cmd = ir = None
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("pid:"):
                    pid = int(line.split()[1])
                elif line.startswith("cmd:"):
                    cmd = line[4:].strip()
                elif line.startswith("part:"):
                    number = int(line.split()[1])
                elif line.startswith("desc: Trigger:"):
                    text = line.split(":", 2)[2].strip()
                    trigger = text.split("=", 1)[1] if text.startswith("--dump-before=") else ""
                elif line.startswith("summary:"):
                    ir = int(line.split()[1])
                    break
        if pid is None or ir is None:
            raise BenchError(f"{path}: not a callgrind output file")
        procs.setdefault(pid, []).append(Part(pid, number or 1, trigger or "", cmd or "", ir))
    for parts in procs.values():
        parts.sort(key=lambda p: p.number)
    return procs


def _segments(parts: Sequence[Part]) -> list[list[Part]]:
    """The parts between BOUNDARY dumps (the part that ends at a boundary included)."""
    segs: list[list[Part]] = [[]]
    for p in parts:
        segs[-1].append(p)
        if p.trigger == BOUNDARY:
            segs.append([])
    return segs


def _timed(seg: Sequence[Part]) -> tuple[int, int]:
    """(instructions inside clock pairs, number of pairs) of one segment: every
    second MARK dump ends a timed region."""
    marks = [p for p in seg if p.trigger == MARK]
    if len(marks) % 2:
        raise BenchError("an odd number of clock reads in a counted segment")
    timed = marks[1::2]
    return sum(p.ir for p in timed), len(timed)


def noop_argv(program: str) -> list[str]:
    """A no-op run of program: its process start-up and next to nothing else. python
    runs "pass", git prints its version; of any other program no option is assumed
    (mawk refuses --version): it runs without arguments, on empty input, and may exit
    non-zero (noop_may_fail) after its usage line."""
    name = Path(program).name
    if name.startswith("python"):
        return [program, "-c", "pass"]
    if name == "git":
        return [program, "--version"]
    return [program]


def noop_may_fail(program: str) -> bool:
    """A no-op run of program (noop_argv) need not exit 0: one without arguments."""
    return noop_argv(program) == [program]


def count_process(argv: Sequence[str], env: Mapping[str, str], stdin: bytes | None = None,
                  check: bool = False) -> int:
    """The instructions of a whole process (its start-up included) and of every process
    it runs, under callgrind in env (stdin: its input; None: ours); check: BenchError
    when it exits non-zero. lab.speed counts whole commands with it."""
    with tempfile.TemporaryDirectory(prefix="reftable-lab-cg-") as d:
        cmd = [*callgrind_argv(Path(d)), *argv]
        err = b""
        if check:
            run_command(cmd, env=env)
        else:
            err = subprocess.run(cmd, input=stdin, capture_output=True, env=dict(env),
                                 check=False).stderr
        parts = read_parts(Path(d))
    if not parts:
        raise BenchError(f"callgrind gave no count for {list(argv)[:4]}: {err[-300:]!r}")
    return sum(p.ir for ps in parts.values() for p in ps)


_NOOP_CACHE: dict[str, int] = {}


def noop_count(program: str) -> int:
    """Instructions of a no-op run of program (its process start-up), counted once."""
    if program not in _NOOP_CACHE:
        _NOOP_CACHE[program] = count_process(noop_argv(program), count_env(), stdin=b"",
                                             check=not noop_may_fail(program))
    return _NOOP_CACHE[program]


@dataclass
class Count:
    """The instructions of one run of a workload's timed region, and how they were got."""
    instructions: int
    parts: dict[str, Any] = field(default_factory=dict)   # the raw counts (pyperf metadata)


def analyse(procs: dict[int, list[Part]], top: int) -> Count:
    """The Count of a counting worker's dumps (top: the worker's pid)."""
    if top not in procs:
        raise BenchError(f"no callgrind output of the worker (pid {top})")
    segs = _segments(procs[top])
    if len(segs) != 5:
        raise BenchError(f"the counting worker made {len(segs) - 1} boundary dumps, not 4")
    pair, npair = _timed(segs[1])
    t0, n0 = _timed(segs[2])
    t1, n1 = _timed(segs[3])
    if npair != 1:
        raise BenchError("the empty clock pair did not give one timed region")
    own = (t1 - n1 * pair) - (t0 - n0 * pair)
    parts: dict[str, Any] = {"lab_startup": sum(p.ir for p in segs[0]),
                             "lab_clock_pair": pair, "lab_timed_0": t0, "lab_pairs_0": n0,
                             "lab_timed_1": t1, "lab_pairs_1": n1, "lab_worker": own}
    children = {pid: ps for pid, ps in procs.items() if pid != top}
    if not children:
        return Count(own, parts)
    total = sum(p.ir for ps in children.values() for p in ps)
    noop = 0
    for ps in children.values():
        noop += noop_count(ps[0].cmd.split()[0])
    work = (total - noop) / 2            # the warm-up and the counted run spawn them alike
    parts.update(lab_children=len(children), lab_children_ir=total, lab_children_noop=noop)
    if work <= 0:
        raise BenchError(f"the child processes did no work beyond a no-op run ({work})")
    return Count(round(work), parts)


# Counting one command in several memory layouts (count_worker): the timed region of a
# Python worker counts differently by where its objects fall in CPython's allocator.
# Found (show-ref over one table of 20,000 refs, one flag variant, a padding variable
# of 8, 24, ..., 520 bytes): 31 of 33 lengths counted 67.16-67.20 M, two (88 and 440
# bytes) 67.95 and 68.01 M, +1.2%, all of it in obmalloc's _PyObject_Malloc and
# _PyObject_Free (a pool that empties and fills again on every record). Three more
# bytes of PATH moved that variant by as much, and the flag specs and names on two
# variants' command lines differ in length as such a padding does: a count of one
# layout could put a flag worth 1% on the wrong side of 1. So a count is the median of
# the counts in LAYOUTS: the command with LAYOUT_VAR set to that many bytes (its
# environment, at the top of the process's stack and copied into os.environ, moves
# both); one unlucky layout of three no longer moves it, and it still repeats to the
# instruction.
LAYOUT_VAR = "REFTABLE_LAB_LAYOUT"
LAYOUTS = (0, 104, 232)


def count_worker(cmd: Sequence[str], env: Mapping[str, str] | None = None,
                 keep: Path | None = None, layouts: Sequence[int] = LAYOUTS) -> Count:
    """Count the `python -m lab.worker --count ...` command cmd (see the module doc):
    the median of its counts in each of `layouts` (LAYOUTS; of an even number, the lower
    middle one: a count is one run's, never an average), the layouts' counts in
    parts["lab_layouts"]; keep: a directory to leave the callgrind files in, one
    folder a layout, layout-<bytes> (default: temporary ones)."""
    if not available():
        raise BenchError("counting instructions needs valgrind and the detrand library "
                         "(gcc to build it)")
    if not layouts:
        raise BenchError("counting needs at least one layout")
    counts = [(_count_worker_in(cmd, env, pad, Path(keep) / f"layout-{pad}" if keep else None),
               pad) for pad in layouts]
    ordered = sorted(counts, key=lambda c: c[0].instructions)
    median, _ = ordered[(len(ordered) - 1) // 2]
    parts = {**median.parts,
             "lab_layouts": " ".join(f"{pad}:{c.instructions}" for c, pad in counts)}
    return Count(median.instructions, parts)


def _count_worker_in(cmd: Sequence[str], env: Mapping[str, str] | None, pad: int,
                     keep: Path | None) -> Count:
    """One count of cmd, with LAYOUT_VAR `pad` bytes long in its environment."""
    with tempfile.TemporaryDirectory(prefix="reftable-lab-cg-") as tmp:
        out_dir = Path(keep) if keep else Path(tmp)
        out_dir.mkdir(parents=True, exist_ok=True)
        for old in out_dir.glob("cg.*"):
            old.unlink()
        argv = [*callgrind_argv(out_dir), *cmd]
        worker_env = {**count_env(env), LAYOUT_VAR: "." * pad}
        if client_requests_supported():
            worker_env = uninstrumented_env(worker_env)
        with private_tmpdir(cmd, worker_env) as tmpdir:
            proc = subprocess.Popen(argv, env={**worker_env, "TMPDIR": tmpdir},
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                    text=True)
            _, err = proc.communicate()
        if proc.returncode != 0:
            raise BenchError(f"counting failed ({proc.returncode}): {' '.join(cmd)}\n"
                             f"{err[-4000:]}")
        return analyse(read_parts(out_dir), proc.pid)


def write_count(path: Path, name: str, count: Count, metadata: Mapping[str, Any],
                measure: str = "instructions") -> None:
    """A pyperf file of one benchmark `name`: one run, one value, the count (of
    `measure`: lab.measure.allocations stores its counts the same way)."""
    md = {**metadata, **count.parts, "name": name, "unit": "integer", "loops": 1,
          MEASURE_KEY: measure}
    run = pyperf.Run([float(count.instructions)], metadata=md, collect_metadata=True)
    pyperf.Benchmark([run]).dump(str(path), replace=True)


def load_count(path: Path, name: str = "", measure: str = "instructions") -> float:
    """The count of a file write_count wrote (of its benchmark `name`, if given)."""
    return load_count_metadata(path, name, measure)[0]


def load_count_metadata(path: Path, name: str = "", measure: str = "instructions"
                        ) -> tuple[float, dict[str, Any]]:
    """(count, the benchmark's metadata) of a file write_count wrote."""
    suite = pyperf.BenchmarkSuite.load(str(path))
    bench = suite.get_benchmark(name) if name else suite.get_benchmarks()[0]
    md = bench.get_metadata()
    if md.get(MEASURE_KEY) != measure:
        raise BenchError(f"{path}: not a count of {measure}")
    return bench.get_values()[0], md


# A cache of counts, shared by the caller across scenarios (RunOptions.counts):
# (workload, gitdir, params, flags, peer, worker env) -> its Count. A count is deterministic, so a
# variant another scenario already counted on the same dataset with the same parameters
# and flags (iterate-refs-memory's are show-ref-1table's; the odb grids share all-on,
# all-off and grid points with their walk) is reused: `bench` counts each command once.
CountCache = dict[tuple[str, str, str, str, bool, str], Count]


def count_key(ctx: RunContext, v: Variant) -> tuple[str, str, str, str, bool, str]:
    """A count's identity: a revision's worker (its extra env) is another command."""
    return (v.workload, str(ctx.gitdir), json.dumps(ctx.params, sort_keys=True),
            v.flags.to_spec(), v.peer, json.dumps(dict(ctx.extra_env(v) or {}), sort_keys=True))


def count_variant(ctx: RunContext, v: Variant, counts: CountCache) -> tuple[float, Path]:
    """The instructions of one run of the variant's timed region, written to
    <scenario>.<label>.instructions.json; (count, that file). A command already in
    `counts` (same workload, dataset, parameters, flags and environment) is not
    counted again; a new count is added to it."""
    key = count_key(ctx, v)
    if key in counts:
        count = counts[key]
    else:
        count = count_one(ctx, v)
        counts[key] = count
    out = ctx.path(v, "instructions")
    write_count(out, ctx.bench_name(v), count, ctx.metadata(v))
    return float(count.instructions), out


def prepare(ctx: RunContext, variants: Iterable[Variant]) -> None:
    """Byte-code and lazy imports once per worker environment (revision), natively,
    before the counted workers start."""
    compile_packages()
    for v in {tuple(sorted((ctx.extra_env(v) or {}).items())): v for v in variants}.values():
        run_command(ctx.worker_cmd(v, "--count"), env=count_env(ctx.env(v)))


def count_one(ctx: RunContext, v: Variant) -> Count:
    """The count of one variant's command (after prepare())."""
    return count_worker(ctx.worker_cmd(v, "--count"), env=ctx.env(v))


def count_here(ctx: RunContext, todo: Mapping[Any, Variant]) -> dict[Any, Count]:
    """The counts of todo (key -> variant) on this machine, `jobs` at once (ctx.each)."""
    prepare(ctx, todo.values())
    out: dict[Any, Count] = {}

    def one(item: tuple[Any, Variant]) -> None:
        out[item[0]] = count_one(ctx, item[1])
        ctx.progress(f"instructions {item[1].label}", 1)
    ctx.each(one, list(todo.items()))
    return out


class Instructions(PerVariant, name="instructions", phase=0):
    """The instruction measure in a run (see the module doc)."""

    def missing(self) -> str | None:
        return None if available() else "valgrind (apt-get install valgrind)"

    def measure(self, ctx: RunContext, variants: Sequence[Variant], record: Record) -> None:
        # each distinct command once (two variants of one scenario may be one command),
        # from the counter's store when it has it (ctx.counter: lab.countcache), else
        # `jobs` at once here or by the counter's executor; then every variant's file
        counts: CountCache = {} if ctx.counts is None else ctx.counts
        todo = {count_key(ctx, v): v for v in variants}
        todo = {key: v for key, v in todo.items() if key not in counts}
        origins: dict[Any, Any] = {}
        if ctx.counter is not None and todo:
            for key, (count, origin) in ctx.counter.count(ctx, self.name, todo,
                                                         lambda t: count_here(ctx, t)).items():
                counts[key], origins[key] = count, origin
        elif todo:
            counts.update(count_here(ctx, todo))
        for v in variants:
            n, path = count_variant(ctx, v, counts)
            figures: dict[str, Any] = {"instructions": n, "instructions_json": str(path)}
            if origins.get(count_key(ctx, v)):
                figures["cached"] = {self.name: origins[count_key(ctx, v)]}
            record(v.label, figures)
            if todo.get(count_key(ctx, v)) is not v:
                ctx.progress(None, 1)

    def figures(self, path: Path, benchmark: str) -> dict[str, Any]:
        return {"instructions": load_count(path, benchmark)}


MEASURE = Instructions()
