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
What is run (which variants, in which order) is lab.harness's business.
"""
from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyperf

from . import BenchError, run_command

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


def time_worker(cmd: Sequence[str], out: Path, mode: str,
                env: Mapping[str, str] | None = None) -> list[float]:
    """A complete pyperf run of the worker command cmd (in env, if given) into out
    (replaced); its values."""
    out.unlink(missing_ok=True)
    run_command([*cmd, "-o", str(out), *pyperf_mode_args(mode)], env=env)
    return load_values(out)


def time_round(cmd: Sequence[str], out: Path, name: str, mode: str,
               env: Mapping[str, str] | None = None) -> tuple[list[float], list[list[float]]]:
    """One more interleaved round of the worker command cmd (in env, if given), appended
    to out; (values, values per round) of its benchmark `name` afterwards."""
    done = load_runs(out, name)[1] if out.exists() else []
    loops = load_loops(out) if done else None
    r = len(done) + 1
    run_command([*cmd, "--round", str(r), "--append", str(out), *round_mode_args(mode, loops)],
                env=env)
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
