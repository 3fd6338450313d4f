"""Profile a scenario's workload: line_profiler on its hot loops, scalene, cProfile.

Contract: each function runs the workload with the given flags on the
scenario's dataset and writes the profiler's text output to `out`, returning
that path. line_profiler and cProfile run in-process; scalene runs
`lab.run_once` in a subprocess (it must own the interpreter).
"""
from __future__ import annotations

import cProfile
import importlib
import io
import json
import pstats
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

from reftable_core.flags import Flags

from .scenarios import Scenario


def resolve_dotted(dotted: str) -> Callable[..., Any]:
    module, _, qual = dotted.partition(":")
    obj: Any = importlib.import_module(module)
    for part in qual.split("."):
        obj = getattr(obj, part)
    return obj


def _prepare(scenario: Scenario, scale: str, flags: Flags, datasets_dir: Path | None):
    from lab.workloads import WORKLOADS
    ds = scenario.dataset(scale, datasets_dir)
    params = scenario.params(scale)
    return ds, params, WORKLOADS[scenario.workload](ds.gitdir, params, flags)


def line_profile(scenario: Scenario, scale: str, flags: Flags, out: Path, loops: int = 1,
                 datasets_dir: Path | None = None) -> Path:
    from line_profiler import LineProfiler
    if not scenario.hot:
        raise ValueError(f"scenario {scenario.name} names no hot functions to line-profile")
    lp = LineProfiler()
    for dotted in scenario.hot:
        lp.add_function(resolve_dotted(dotted))
    _, _, time_func = _prepare(scenario, scale, flags, datasets_dir)
    lp.enable_by_count()
    try:
        time_func(loops)
    finally:
        lp.disable_by_count()
    buf = io.StringIO()
    lp.print_stats(stream=buf, stripzeros=True)
    out.write_text(buf.getvalue())
    return out


def c_profile(scenario: Scenario, scale: str, flags: Flags, out: Path, loops: int = 1,
              datasets_dir: Path | None = None) -> Path:
    _, _, time_func = _prepare(scenario, scale, flags, datasets_dir)
    prof = cProfile.Profile()
    prof.enable()
    try:
        time_func(loops)
    finally:
        prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(40)
    out.write_text(buf.getvalue())
    return out


def scalene_profile(scenario: Scenario, scale: str, flags: Flags, out: Path, loops: int = 1,
                    datasets_dir: Path | None = None) -> Path:
    ds = scenario.dataset(scale, datasets_dir)
    params = scenario.params(scale)
    json_out = out.with_suffix(".json")
    run_once = Path(__file__).with_name("run_once.py")
    cmd = [sys.executable, "-m", "scalene", "run", "-o", str(json_out), str(run_once), "---",
           "--workload", scenario.workload, "--gitdir", str(ds.gitdir),
           "--params", json.dumps(params), "--lab-flags", flags.to_spec(), "--loops", str(loops)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0 or not json_out.exists():
        raise RuntimeError(f"scalene failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    view = subprocess.run([sys.executable, "-m", "scalene", "view", "--cli", "--reduced",
                           str(json_out)], capture_output=True, text=True)
    out.write_text(view.stdout if view.returncode == 0 else proc.stdout)
    return out


PROFILERS: dict[str, Callable[..., Path]] = {
    "line": line_profile,
    "cprofile": c_profile,
    "scalene": scalene_profile,
}
