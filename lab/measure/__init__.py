"""The lab's measures: what a variant's number is.

Contract: each measure is one module here, with the one shape every measure has
(lab.measure.context: Measure, given a RunContext) and one line in
lab.measure.registry (REGISTRY, MEASURES: the names `reftable-lab bench --measure`
accepts; parse_measures()). Each writes pyperf JSON (pyperf's Run / Benchmark
model):

- time (lab.measure.time): wall seconds per run of the workload's timed
  region, pyperf workers, sequential or interleaved rounds.
- instructions (lab.measure.instructions): guest instructions of the same
  timed region under `valgrind --tool=callgrind`, one worker per variant;
  deterministic, so a ratio of two counts is exact.
- allocations (lab.measure.allocations): heap allocations and bytes of the
  same timed region, counted by a preloaded malloc-counting library built
  from lab/measure/c/alloccount.c (Python with PYTHONMALLOC=malloc; git by
  its processes' totals minus a no-op run); exact, like instructions.
- memory (lab.measure.memory): peak RSS the workload adds to the worker (a
  peer: its processes' peak above a no-op run) and the tracemalloc peak of
  the timed region.
- syscalls (lab.measure.syscalls): the system calls of the same timed region,
  per call name, under `strace -f` (the counting protocol on system-call
  markers; a peer: its processes from their execve, minus a no-op run); exact.

The work pass (lab.measure.work) has the same shape, and runs after them.
lab.measure.clock is the one clock the workloads read; it is also where the
instruction measure learns the timed region's bounds. This package's own
module holds what every measure shares: BenchError, the command runners and
PerVariant, the shape of the three measures that take one worker a variant.
"""
from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:           # annotations only: the worker loads neither
    from ..scenario import Variant
    from .context import Record, RunContext


class BenchError(RuntimeError):
    """A measurement could not be made (a worker failed, a tool is missing, ...)."""


def run_command(cmd: Sequence[str], env: Mapping[str, str] | None = None) -> str:
    """Run cmd; its stdout, or BenchError with the tail of its output when it fails."""
    proc = subprocess.run(list(cmd), capture_output=True, text=True, check=False,
                          env=dict(env) if env is not None else None)
    if proc.returncode != 0:
        raise BenchError(f"command failed ({proc.returncode}): {' '.join(cmd)}\n"
                         f"{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    return proc.stdout


def run_worker_log(cmd: Sequence[str], env: Mapping[str, str], prefix: str,
                   what: str) -> tuple[int, Any]:
    """Run a measuring worker; (its pid, the JSON of the one stdout line starting
    with prefix). BenchError, naming `what`, if it fails or prints not one such line."""
    proc = subprocess.Popen(list(cmd), env=dict(env), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise BenchError(f"{what} failed ({proc.returncode}): {' '.join(cmd)}\n{err[-4000:]}")
    logs = [line for line in out.splitlines() if line.startswith(prefix)]
    if len(logs) != 1:
        raise BenchError(f"the worker printed {len(logs)} {what} logs, not 1")
    return proc.pid, json.loads(logs[0][len(prefix):])


class PerVariant:
    """A measure of one worker a variant (instructions, allocations, memory): a
    progress step a variant; nothing to do without variants; a tool that must be
    there (missing(): what is not, or None); each variant's figures under
    <name>_json in the result entry (its pyperf file), read back by figures()."""
    name: str
    phase: int

    def __init_subclass__(cls, name: str = "", phase: int = 0, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.name, cls.phase = name, phase

    def steps(self, ctx: RunContext, variants: Sequence[Variant]) -> int:
        return len(variants)

    def run(self, ctx: RunContext, variants: Sequence[Variant], record: Record) -> None:
        if not variants:
            return
        missing = self.missing()
        if missing:
            raise BenchError(f"--measure {self.name} needs {missing}")
        self.measure(ctx, variants, record)

    def missing(self) -> str | None:
        return None

    def measure(self, ctx: RunContext, variants: Sequence[Variant], record: Record) -> None:
        """Measure the variants, write their files, record their figures."""
        raise NotImplementedError

    def load(self, entry: Mapping[str, Any], run_dir: Path) -> dict[str, Any]:
        key = f"{self.name}_json"
        if not entry.get(key):
            return {}
        path = Path(run_dir) / entry[key]
        return {key: str(path), **self.figures(path, entry.get("benchmark", ""))}

    def figures(self, path: Path, benchmark: str) -> dict[str, Any]:
        """The figures of benchmark in the measure's file at path."""
        raise NotImplementedError
