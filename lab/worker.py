"""pyperf worker: times one workload on one dataset with one flags value.

Run by the harness as a subprocess (pyperf's Runner does not run inside a
notebook kernel, and it spawns its own worker processes):

    python -m lab.worker --workload show_ref_single --gitdir D --params '{..}' \
        --lab-flags 'mmap=off,...' --name NAME -o out.json [--fast|--rigorous]

A workload (lab.workloads.WORKLOADS[name]) is a factory
    factory(gitdir: Path, params: dict, flags: Flags) -> time_func(loops) -> seconds
so each loop's set-up (e.g. a fresh copy of an empty repository) stays
outside the timed region.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyperf

from reftable_core.flags import Flags

_OWN_ARGS = ("workload", "gitdir", "params", "lab_flags")


def _add_cmdline_args(cmd: list[str], args: Any) -> None:
    for name in _OWN_ARGS:
        cmd.extend([f"--{name.replace('_', '-')}", str(getattr(args, name))])


def main() -> None:
    runner = pyperf.Runner(add_cmdline_args=_add_cmdline_args)
    runner.argparser.add_argument("--workload", required=True)
    runner.argparser.add_argument("--gitdir", required=True)
    runner.argparser.add_argument("--params", default="{}")
    runner.argparser.add_argument("--lab-flags", default="")
    runner.argparser.add_argument("--name", default=None)
    args = runner.parse_args()
    name = args.name or args.workload
    if args.worker:
        from lab.workloads import WORKLOADS
        flags = Flags().with_spec(args.lab_flags)
        factory = WORKLOADS[args.workload]
        time_func = factory(Path(args.gitdir), json.loads(args.params), flags)
    else:           # the manager only spawns workers; it never runs the workload
        def time_func(loops: int) -> float:
            raise RuntimeError("not a worker")
    runner.metadata["lab_workload"] = args.workload
    runner.metadata["lab_flags"] = args.lab_flags
    runner.bench_time_func(name, time_func)


if __name__ == "__main__":
    main()
