"""Value-level interleaving: every variant of a scenario timed in ONE process.

Run by the harness (`reftable-lab bench --rounds R --within-process`):

    python -m lab.interleave --spec spec.json -o out.json

spec.json: {"gitdir": D, "params": {...}, "warmups": W,
            "variants": [{"label": L, "name": BENCH, "workload": NAME, "flags": SPEC}, ...],
            "order": [[L, ...], ...]}        # one row per round

Each variant's time_func comes from lab.workloads.build, with its own flags;
each is warmed up W times; then round by round, in the round's order, each
variant's time_func(1) gives one value. Consecutive values of two variants are
seconds apart instead of minutes (one pyperf process per variant and round),
so a machine whose speed changes over minutes (a shared VM) biases them alike
and the per-round ratio cancels it. One line "round<TAB>label<TAB>seconds" per
value goes to stdout (the harness's progress bar); out.json is a pyperf
BenchmarkSuite at the end: one benchmark per variant (named BENCH), one run
per round carrying its round number (lab.measure.time.ROUND_KEY), the warm-ups in
the first run. The price: the variants share one interpreter (allocator state,
imported modules), which the changing order spreads over all of them.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

import pyperf

from .measure.time import rounds_benchmark
from .workloads import build


def run(spec: dict[str, Any], out: Path, stream: TextIO = sys.stdout) -> pyperf.BenchmarkSuite:
    gitdir = Path(spec["gitdir"])
    variants = {v["label"]: v for v in spec["variants"]}
    funcs = {label: build(v["workload"], v["flags"], gitdir, spec["params"])
             for label, v in variants.items()}
    order = spec["order"]
    warmups: dict[str, list[float]] = {label: [] for label in funcs}
    for _ in range(int(spec.get("warmups", 1))):
        for label in (order[0] if order else list(funcs)):
            warmups[label].append(funcs[label](1))
    rounds: dict[str, list[list[float]]] = {label: [] for label in funcs}
    for r, row in enumerate(order, 1):
        for label in row:
            t = funcs[label](1)
            rounds[label].append([t])
            print(f"{r}\t{label}\t{t!r}", file=stream, flush=True)
    suite = pyperf.BenchmarkSuite([
        rounds_benchmark(v["name"], rounds[label],
                         {"lab_workload": v["workload"], "lab_flags": v["flags"]},
                         warmups=warmups[label])
        for label, v in variants.items() if rounds[label]])
    suite.dump(str(out), replace=True)
    return suite


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m lab.interleave")
    p.add_argument("--spec", required=True, type=Path)
    p.add_argument("-o", "--out", required=True, type=Path)
    args = p.parse_args(argv)
    run(json.loads(args.spec.read_text()), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
