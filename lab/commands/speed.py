"""`reftable-lab speed`: the speed of the model, whole commands of the lab beside git's
on the same data, counted by callgrind, in one run (lab.speed; issue 15's table).

    reftable-lab speed [--scale small|full] [--core interpreted,compiled,cython]
                       [--core-rev REV ...] [--history GITDIR ...] [--only W,...]
                       [--repeat N] [--jobs N] [--no-count] [--stages] [--out PATH]
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from lab.builds import CORE_BUILDS
from reftable_core.flags import Flags

WORKLOAD_NAMES = ("show-ref-reftable", "show-ref-packed", "log-raw", "read-objects",
                  "for-each-ref-atoms", "for-each-ref-walks", "update-ref-create", "startup")


def register(sub: argparse._SubParsersAction, add_flag_options: Callable) -> None:
    p = sub.add_parser(
        "speed", help="whole commands of the lab beside git's (instructions, CPU, output)",
        description="The speed of the model: each workload run by git and by each lab build "
                    "(this checkout, interpreted, compiled by mypyc or by Cython, and --core-rev "
                    "revisions), "
                    "whole processes counted by callgrind (start-up included), CPU the best "
                    "of --repeat, stdout compared with git's. Prints a markdown table.")
    add_flag_options(p)
    p.add_argument("--scale", default="small", choices=("small", "full"),
                   help="small: 20k refs in 3 tables, 100k packed, 300 commits, 10k "
                        "creates; full: 1M refs, 1M packed, 3000 commits, 100k creates")
    p.add_argument("--core", default="interpreted", metavar="BUILD[,BUILD]",
                   help="interpreted, compiled (mypyc), cython, or several (each lab variant "
                        "under each)")
    p.add_argument("--core-rev", action="append", default=[], metavar="REV",
                   help="also a commit of this repository (its worktree; repeat)")
    p.add_argument("--history", action="append", default=[], type=Path, metavar="GITDIR",
                   help="a real repository for log --raw and every object read (refs/heads/"
                        "main; repeat)")
    p.add_argument("--only", default=None, metavar="W[,W]",
                   help=f"workloads: {', '.join(WORKLOAD_NAMES)} (default: all)")
    p.add_argument("--repeat", type=int, default=3, help="CPU runs per command (best taken)")
    p.add_argument("--jobs", type=int, default=1, help="callgrind counts made at once")
    p.add_argument("--no-count", action="store_true", help="CPU and output only (no callgrind)")
    p.add_argument("--stages", action="store_true",
                   help="also split the reftable show-ref row into stages (start-up, the "
                        "tables' record loops, the merge loop, show-ref's loop), instructions "
                        "per ref (python -m lab.stages)")
    p.add_argument("--datasets", type=Path, default=Path("datasets"))
    p.add_argument("--out", type=Path, default=None,
                   help="also write PATH.md and each row's results beside it "
                        "(PATH-<workload>.result.json and its pyperf files: "
                        "`reftable-lab report` reads them)")
    p.set_defaults(func=run_speed)


def run_speed(args: argparse.Namespace, flags: Flags) -> int:
    from lab.speed import SpeedOptions, run
    if args.flags is not None or args.baseline:
        print("reftable-lab speed: every lab command runs with its default flags (all on); "
              "--flags and --baseline do not apply", file=sys.stderr)
        return 2
    names = args.only.split(",") if args.only else None
    bad = [n for n in names or () if n not in WORKLOAD_NAMES]
    cores = args.core.split(",")
    if bad or any(c not in CORE_BUILDS for c in cores):
        print(f"reftable-lab speed: unknown workload or build: {', '.join(bad) or args.core} "
              f"(workloads: {', '.join(WORKLOAD_NAMES)}; builds: {', '.join(CORE_BUILDS)})",
              file=sys.stderr)
        return 2
    print(run(SpeedOptions(args.scale, cores, args.core_rev, args.history, names,
                           args.datasets, args.repeat, args.jobs, not args.no_count,
                           args.out, args.stages)), end="")
    return 0
