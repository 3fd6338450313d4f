"""`reftable-lab history SCENARIO [--metric M] [--variant L]`: a metric over runs.

Reads <out>/index.jsonl (every `reftable-lab bench` run appends to it,
lab.export), prints each variant's series (run, project commit, value, and
its ratio to the run before: a regression is a step) and plots it into
<out>/history-<scenario>-<metric>.png (or --png PATH). Exit 1 when no run
measured the metric for that scenario (and variant).
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from reftable_core.flags import Flags

from lab.export import INDEX, read_index
from lab.results import METRICS
from lab.history import default_metric, lines, series
from lab.plots import history_plot, save_png


def register(sub: argparse._SubParsersAction, add_flag_options: Callable) -> None:
    p = sub.add_parser("history", help="plot one metric of a scenario over the indexed runs",
                       description="A metric of a scenario's variants over the runs recorded "
                                   "in the results index (results/index.jsonl).")
    add_flag_options(p)
    p.add_argument("scenario")
    p.add_argument("--metric", default=None, choices=METRICS,
                   help="default: the first of latency, instructions, allocations, "
                        "peak-memory that the runs measured")
    p.add_argument("--variant", default=None, metavar="LABEL", help="one variant only")
    p.add_argument("--out", default="results", help="results root holding index.jsonl")
    p.add_argument("--png", type=Path, default=None, help="the plot's path")
    p.set_defaults(func=run_history)


def run_history(args: argparse.Namespace, flags: Flags) -> int:
    root = Path(args.out)
    entries = read_index(root)
    metric = args.metric or default_metric(entries, args.scenario)
    found = series(entries, args.scenario, metric, args.variant) if metric else []
    if not found:
        what = f" {metric}" if metric else ""
        print(f"reftable-lab history: no run in {root / INDEX} measured{what} for "
              f"{args.scenario}{f' [{args.variant}]' if args.variant else ''}", file=sys.stderr)
        return 1
    for line in lines(found, metric):
        print(line)
    png = args.png or root / f"history-{args.scenario}-{metric}.png"
    save_png(history_plot(found, args.scenario, metric), png, dpi=100)
    print(f"plot: {png}")
    return 0
