"""The time measure: wall seconds of a workload's timed region, in pyperf JSON.

Contract: every timing path writes pyperf JSON (its Run / Benchmark /
BenchmarkSuite model) and reads values back from it:
- time_worker: one complete pyperf run of a `python -m lab.worker` command
  (pyperf's worker processes, effort by --mode);
- time_round: one interleaved round of such a command (1 process,
  ROUND_VALUES[mode] values, 1 warm-up), appended to its file, the round in
  every run's ROUND_KEY metadata, the loop count of its first round kept;
- time_within_process: every round of every variant in one
  `python -m lab.interleave` process (a suite, one benchmark per variant).
load_runs() gives (values, values per round) of a file or of one benchmark.
round_orders() is the interleaved schedule (a seeded Williams design). MEASURE is
the measure in a run (lab.measure.context.Measure): sequential (each variant's
pyperf run complete in turn), interleaved (RunContext.order: one worker invocation
per variant and round) or within one process; which variants are run is
lab.harness's business.
"""
from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyperf

from . import BenchError, run_command

if TYPE_CHECKING:           # annotations only (lab.measure.context)
    from ..scenario import Variant
    from .context import Record, RunContext

# pyperf run metadata: the interleaved round (1, 2, ...) a run's values belong to
ROUND_KEY = "lab_round"


def pyperf_mode_args(mode: str) -> list[str]:
    return {"fast": ["--fast"], "rigorous": ["--rigorous"], "normal": [],
            "quick": ["--processes", "3", "--values", "3", "--warmups", "1"]}[mode]


# interleaved rounds: values of one variant's invocation per round, by --mode
# (repeated in lab/commands/bench.py's --mode help)
ROUND_VALUES = {"quick": 3, "fast": 3, "normal": 5, "rigorous": 6}


def round_mode_args(mode: str, loops: int | None = None) -> list[str]:
    """One worker process, ROUND_VALUES[mode] values after 1 warm-up; loops fixed if given."""
    args = ["--processes", "1", "--values", str(ROUND_VALUES[mode]), "--warmups", "1"]
    if loops:
        args += ["--loops", str(loops)]
    return args


def _benchmarks(json_path: Path, name: str = "") -> list[pyperf.Benchmark]:
    suite = pyperf.BenchmarkSuite.load(str(json_path))
    return [suite.get_benchmark(name)] if name else suite.get_benchmarks()


def load_values(json_path: Path, name: str = "") -> list[float]:
    """Every value of a pyperf file (of its benchmark `name`, if given)."""
    return load_runs(json_path, name)[0]


def load_runs(json_path: Path, name: str = "") -> tuple[list[float], list[list[float]]]:
    """(values, values per round) of a pyperf file, or of its benchmark `name`:
    rounds from the runs' ROUND_KEY metadata, in round order ([] when no run has one)."""
    values: list[float] = []
    by_round: dict[int, list[float]] = {}
    for bench in _benchmarks(json_path, name):
        for run in bench.get_runs():
            values.extend(run.values)
            r = run.get_metadata().get(ROUND_KEY)
            if r is not None and run.values:
                by_round.setdefault(int(r), []).extend(run.values)
    return values, [by_round[r] for r in sorted(by_round)]


def rounds_benchmark(name: str, rounds: Sequence[Sequence[float]],
                     metadata: dict[str, Any] | None = None,
                     warmups: Sequence[float] = (), numbered: bool = True) -> pyperf.Benchmark:
    """A pyperf Benchmark of one run per round (loops 1; the warm-up values go to the
    first run), its round in ROUND_KEY unless numbered is False. The machine's
    metadata is collected once, as pyperf collects it for a run."""
    common = {**pyperf.Run([1.0], collect_metadata=True).get_metadata(), **(metadata or {}),
              "name": name, "loops": 1}
    runs = [pyperf.Run(values, warmups=[(1, w) for w in warmups] if i == 1 else None,
                       metadata={**common, **({ROUND_KEY: i} if numbered else {})},
                       collect_metadata=False)
            for i, values in enumerate(rounds, 1)]
    return pyperf.Benchmark(runs)


def load_loops(json_path: Path) -> int | None:
    """The loops per value of a pyperf file's runs (None when they differ or are missing)."""
    suite = pyperf.BenchmarkSuite.load(str(json_path))
    loops = {run.get_loops() for bench in suite.get_benchmarks() for run in bench.get_runs()
             if run.values}
    return loops.pop() if len(loops) == 1 else None


def _env_args(env: Mapping[str, str] | None) -> list[str]:
    """pyperf's manager hands its worker processes only PATH, HOME, PYTHONPATH and a few
    more of its environment: --copy-env makes them run in the whole of env (the variant's
    hermetic environment: its git build's REFTABLE_LAB_GIT, PYTHONSAFEPATH, the pinned
    GIT_* identities), as the other measures' workers do."""
    return ["--copy-env"] if env is not None else []


def time_worker(cmd: Sequence[str], out: Path, mode: str,
                env: Mapping[str, str] | None = None) -> list[float]:
    """A complete pyperf run of the worker command cmd (in env, if given, all of it) into
    out (replaced); its values."""
    out.unlink(missing_ok=True)
    run_command([*cmd, "-o", str(out), *pyperf_mode_args(mode), *_env_args(env)], env=env)
    return load_values(out)


def time_round(cmd: Sequence[str], out: Path, name: str, mode: str,
               env: Mapping[str, str] | None = None) -> tuple[list[float], list[list[float]]]:
    """One more interleaved round of the worker command cmd (in env, if given, all of it),
    appended to out; (values, values per round) of its benchmark `name` afterwards."""
    done = load_runs(out, name)[1] if out.exists() else []
    loops = load_loops(out) if done else None
    r = len(done) + 1
    run_command([*cmd, "--round", str(r), "--append", str(out), *round_mode_args(mode, loops),
                 *_env_args(env)], env=env)
    values, rounds = load_runs(out, name)
    if len(rounds) != r:
        raise BenchError(f"{name}: no values from round {r} in {out}")
    return values, rounds


def time_within_process(spec: dict[str, Any], spec_path: Path, out: Path,
                        on_value: Callable[[int, str], None] | None = None) -> None:
    """Every round of every variant of spec (lab.interleave's format) in one
    `python -m lab.interleave` process, into the suite out; on_value(round,
    label) after each value (a progress bar)."""
    out.unlink(missing_ok=True)
    spec_path.write_text(json.dumps(spec, indent=1))
    cmd = [sys.executable, "-m", "lab.interleave", "--spec", str(spec_path), "-o", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        r, label, _ = line.rstrip("\n").split("\t")
        if on_value:
            on_value(int(r), label)
    err = proc.stderr.read() if proc.stderr else ""
    if proc.wait() != 0:
        raise BenchError(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{err[-4000:]}")


def round_orders(labels: Sequence[str], rounds: int, seed: int | str = 0) -> list[list[str]]:
    """The variant order of each interleaved round.

    A Williams design: rows i of the first row 0, 1, n-1, 2, n-2, ... shifted by i
    (mod n), plus the reversed rows when n is odd. Over a full cycle of rows (n,
    or 2n for odd n) every label is in every position equally often and runs
    right after every other label equally often. The rows' order and the labels'
    places are shuffled with `seed`; rounds beyond one cycle repeat it.
    """
    n = len(labels)
    if n == 0 or rounds <= 0:
        return [[] for _ in range(max(rounds, 0))]
    first = [0]
    lo, hi = 1, n - 1
    while lo <= hi:
        first.append(lo)
        if lo != hi:
            first.append(hi)
        lo, hi = lo + 1, hi - 1
    rows = [[(x + i) % n for x in first] for i in range(n)]
    if n % 2:
        rows += [row[::-1] for row in rows]
    rng = random.Random(seed)
    places = list(labels)
    rng.shuffle(places)
    rng.shuffle(rows)
    return [[places[x] for x in rows[r % len(rows)]] for r in range(rounds)]


class Time:
    """The time measure in a run (see the module doc)."""
    name = "time"
    phase = 3

    def steps(self, ctx: RunContext, variants: Sequence[Variant]) -> int:
        return len(variants) * (ctx.rounds or 1)

    def run(self, ctx: RunContext, variants: Sequence[Variant], record: Record) -> None:
        if ctx.rounds is None:
            for v in variants:
                ctx.progress(v.label, 0)
                out = ctx.path(v)
                record(v.label, {"values": time_worker(ctx.worker_cmd(v), out, ctx.mode,
                                                       ctx.env(v)),
                                 "json_path": str(out)})
                ctx.progress(None, 1)
            return
        for v in variants:
            ctx.path(v).unlink(missing_ok=True)
        if ctx.within_process:
            self._within_process(ctx, variants, record)
            return
        by_label = {v.label: v for v in variants}
        for r, order in enumerate(ctx.order, 1):
            for label in order:
                ctx.progress(f"round {r}/{ctx.rounds} {label}", 0)
                v = by_label[label]
                values, rounds = time_round(ctx.worker_cmd(v), ctx.path(v), ctx.bench_name(v),
                                            ctx.mode, ctx.env(v))
                record(label, {"values": values, "rounds": rounds, "json_path": str(ctx.path(v))})
                ctx.progress(None, 1)

    def _within_process(self, ctx: RunContext, variants: Sequence[Variant],
                        record: Record) -> None:
        out = ctx.out_dir / f"{ctx.scenario}.interleave.json"
        spec = {"gitdir": str(ctx.gitdir), "params": ctx.params, "warmups": 1,
                "order": [list(order) for order in ctx.order],
                "variants": [{"label": v.label, "name": ctx.bench_name(v),
                              "workload": v.workload, "flags": v.flags.to_spec()}
                             for v in variants]}

        def progress(r: int, label: str) -> None:
            ctx.progress(f"round {r}/{ctx.rounds} {label}", 1)
        time_within_process(spec, ctx.out_dir / f"{ctx.scenario}.interleave-spec.json", out,
                            progress)
        for v in variants:
            values, rounds = load_runs(out, ctx.bench_name(v))
            record(v.label, {"values": values, "rounds": rounds, "json_path": str(out)})

    def load(self, entry: Mapping[str, Any], run_dir: Path) -> dict[str, Any]:
        name = entry.get("benchmark", "")
        path = Path(run_dir) / Path(entry["json"]).name if entry.get("json") else None
        if "values" in entry:           # result files from before the values moved out
            values, rounds = entry["values"], entry.get("rounds", [])
        elif path is not None:
            values, rounds = load_runs(path, name)
        else:
            values, rounds = [], []
        return {"values": values, "rounds": rounds, "json_path": str(path) if path else ""}


MEASURE = Time()
