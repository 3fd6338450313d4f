"""Run one workload once (or N loops) outside pyperf: the target for profilers.

    python -m lab.run_once --workload W --gitdir D --params JSON --lab-flags SPEC [--loops N]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from reftable_core.flags import Flags


def run(workload: str, gitdir: Path, params: dict, flags: Flags, loops: int = 1) -> float:
    from lab.workloads import WORKLOADS
    time_func = WORKLOADS[workload](gitdir, params, flags)
    return time_func(loops)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m lab.run_once")
    p.add_argument("--workload", required=True)
    p.add_argument("--gitdir", required=True)
    p.add_argument("--params", default="{}")
    p.add_argument("--lab-flags", default="")
    p.add_argument("--loops", type=int, default=1)
    a = p.parse_args(argv)
    secs = run(a.workload, Path(a.gitdir), json.loads(a.params), Flags().with_spec(a.lab_flags),
               a.loops)
    print(f"{a.workload}: {secs:.6f} s for {a.loops} loop(s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
