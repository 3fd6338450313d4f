"""Profile a scenario's workload: line_profiler on its hot loops, scalene, cProfile.

Contract: each function runs the workload (lab.workloads.build) with the given
flags on the scenario's dataset and writes the profiler's text output to `out`,
returning that path. line_profiler and cProfile run in-process; scalene runs
`lab/worker.py --once` in a subprocess (it must own the interpreter).

line_profiler profiles the scenario's `hot` entries: "module:qualname" names a
function, "module:factory()" calls factory(flags) for the function(s) to profile
(the core's hot-loop variants are ordinary functions in the committed
reftable_core/reftable/loops.py, chosen per flags, e.g. by
reftable_core.reftable.merged.merge_function), so line_profiler shows them from
their real file.
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
from reftable_core.reftable.block import record_loop
from reftable_core.reftable.record import BLOCK_TYPE_REF

from . import worker
from .scenario import Scenario
from .workloads import TimeFunc, build


def resolve_dotted(dotted: str) -> Callable[..., Any]:
    module, _, qual = dotted.partition(":")
    obj: Any = importlib.import_module(module)
    for part in qual.split("."):
        obj = getattr(obj, part)
    return obj


def resolve_hot(entry: str, flags: Flags) -> list[Callable[..., Any]]:
    """The function(s) a Scenario.hot entry names under flags."""
    if entry.endswith("()"):
        got = resolve_dotted(entry[:-2])(flags)
        return list(got) if isinstance(got, (list, tuple)) else [got]
    return [resolve_dotted(entry)]


def ref_record_loops(flags: Flags) -> list[Callable[..., Any]]:
    """The generated decoder of ref blocks that reftable_core.reftable.block uses under flags."""
    return [record_loop(BLOCK_TYPE_REF, flags)]


def write_line_stats(lp: Any, out: Path) -> Path:
    """line_profiler's text report of lp to out."""
    from line_profiler import show_text
    stats = lp.get_stats()
    buf = io.StringIO()
    show_text(stats.timings, stats.unit, stream=buf, stripzeros=True)
    out.write_text(buf.getvalue())
    return out


def _time_func(scenario: Scenario, scale: str, flags: Flags,
               datasets_dir: Path | None) -> TimeFunc:
    return build(scenario.workload, flags, scenario.dataset(scale, datasets_dir).gitdir,
                 scenario.params(scale))


def line_profile(scenario: Scenario, scale: str, flags: Flags, out: Path, loops: int = 1,
                 datasets_dir: Path | None = None) -> Path:
    from line_profiler import LineProfiler
    if not scenario.hot:
        raise ValueError(f"scenario {scenario.name} names no hot functions to line-profile")
    lp = LineProfiler()
    for entry in scenario.hot:
        for func in resolve_hot(entry, flags):
            lp.add_function(func)
    time_func = _time_func(scenario, scale, flags, datasets_dir)
    lp.enable_by_count()
    try:
        time_func(loops)
    finally:
        lp.disable_by_count()
    return write_line_stats(lp, out)


def c_profile(scenario: Scenario, scale: str, flags: Flags, out: Path, loops: int = 1,
              datasets_dir: Path | None = None) -> Path:
    time_func = _time_func(scenario, scale, flags, datasets_dir)
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
    cmd = [sys.executable, "-m", "scalene", "run", "-o", str(json_out), worker.__file__, "---",
           "--once", "--workload", scenario.workload, "--gitdir", str(ds.gitdir),
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
