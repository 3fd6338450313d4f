"""Scaling curves: a scenario measured at several sizes of one parameter.

Contract: parse_sweep("refs=1e3,1e4,1e5") gives ("refs", [1000, 10000,
100000]). run_sweep(scenario, key, sizes, scale, out, options) runs lab.harness.run_scenario
once per size, the scenario's parameters at `scale` with key set to the size
(a dataset parameter builds one dataset per size), each into its own
sub-directory <out>/<key>=<size>/, and returns a Sweep: per variant and peer
the cost at each size (cost(): the first measure's figure: mean seconds,
instructions, allocations, or the peak RSS above the worker's own) and the
exponent of a least-squares line through log(cost) against log(size)
(fit_exponent): a cost growing as n^k. An exponent of QUADRATIC or more is
flagged. write() stores <scenario>.sweep.json, a log-log plot
<scenario>.sweep.png and the sentences ("all-off grows as n^1.98").
"""
from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .harness import RunOptions, run_scenario
from .measure.registry import parse_measures
from .plots import save_png, sweep_plot
from .results import ScenarioResult, VariantResult
from .scenario import Scenario
from .stats import summarize

QUADRATIC = 1.5          # an exponent from here up: flagged as quadratic (or worse)


def parse_sweep(spec: str) -> tuple[str, list[int]]:
    """"KEY=V1,V2,..." (values in any float notation, 1e3 included), sizes ascending."""
    key, sep, values = spec.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"--sweep wants KEY=V1,V2,..., not {spec!r}")
    try:
        sizes = sorted({int(float(v)) for v in values.split(",") if v.strip()})
    except ValueError:
        raise ValueError(f"--sweep {spec!r}: a value is not a number") from None
    if len(sizes) < 2 or sizes[0] <= 0:
        raise ValueError(f"--sweep {spec!r}: at least two positive sizes")
    return key.strip(), sizes


def fit_exponent(sizes: Sequence[float], costs: Sequence[float]) -> float:
    """The slope of the least-squares line of log(cost) on log(size)."""
    xs, ys = [math.log(s) for s in sizes], [math.log(c) for c in costs]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        raise ValueError("a fit needs two different sizes")
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx


_UNITS = {"time": "seconds per run (mean)", "instructions": "instructions per run",
          "allocations": "heap allocations per run", "memory": "peak RSS above own (bytes)"}


def cost(v: VariantResult, measure: str) -> float | None:
    """A variant's figure by measure (None: not measured)."""
    if measure == "time":
        return summarize(v.values).mean if v.values else None
    if measure == "memory":
        return float(v.memory["rss_above"] or 0) if v.memory else None
    return {"instructions": v.instructions, "allocations": v.allocations}[measure]


@dataclass
class Curve:
    label: str
    kind: str
    sizes: list[int] = field(default_factory=list)
    costs: list[float] = field(default_factory=list)

    @property
    def exponent(self) -> float | None:
        ok = [(s, c) for s, c in zip(self.sizes, self.costs) if c > 0]
        return fit_exponent(*zip(*ok)) if len({s for s, _ in ok}) >= 2 else None

    def sentence(self, key: str) -> str:
        k = self.exponent
        if k is None:
            return f"{self.label}: too few positive figures to fit"
        flag = " (quadratic or worse)" if k >= QUADRATIC else ""
        return f"{self.label} grows as {key}^{k:.2f}{flag}"


@dataclass
class Sweep:
    scenario: str
    key: str
    measure: str
    curves: list[Curve]
    results: list[ScenarioResult] = field(default_factory=list)

    def sentences(self) -> list[str]:
        return [c.sentence(self.key) for c in self.curves]

    def to_json(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "key": self.key, "measure": self.measure,
                "curves": [{"label": c.label, "kind": c.kind, "sizes": c.sizes,
                            "costs": c.costs, "exponent": c.exponent,
                            "quadratic": (c.exponent or 0) >= QUADRATIC} for c in self.curves]}


def run_sweep(scenario: Scenario, key: str, sizes: Sequence[int], scale: str = "small",
              out_dir: Path | str = "results", options: RunOptions | None = None,
              params_for: Callable[[dict[str, Any], int], dict[str, Any]] | None = None,
              mode: str = "fast") -> Sweep:
    """The scenario at each size (see the module doc); params_for(params, size) gives
    a size's parameters (default: params with key = size); options and mode go to
    run_scenario (default: RunOptions measuring instructions)."""
    opts = options or RunOptions(measures=("instructions",))
    measures = (parse_measures(opts.measures) if isinstance(opts.measures, str)
                else tuple(opts.measures))
    out = Path(out_dir)
    base = scenario.params(scale)
    if params_for is None and key not in base:
        raise KeyError(f"scenario {scenario.name} has no parameter {key!r} "
                       f"(its parameters: {', '.join(base)})")
    curves: dict[str, Curve] = {}
    results = []
    for size in sizes:
        params = params_for(base, size) if params_for else {**base, key: size}
        sized = dataclasses.replace(scenario, scale_params={**scenario.scale_params,
                                                            scale: params})
        r = run_scenario(sized, scale, out / f"{key}={size}", mode, opts)
        results.append(r)
        for v in r.variants:
            c = cost(v, measures[0])
            if c is not None:
                curve = curves.setdefault(v.label, Curve(v.label, v.kind))
                curve.sizes.append(size)
                curve.costs.append(c)
    return Sweep(scenario.name, key, measures[0], list(curves.values()), results)


def write(sweep: Sweep, out_dir: Path | str) -> Path:
    """<scenario>.sweep.json and the log-log plot <scenario>.sweep.png (lab.plots.sweep_plot);
    the plot's path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{sweep.scenario}.sweep.json").write_text(json.dumps(sweep.to_json(), indent=1))
    path = out / f"{sweep.scenario}.sweep.png"
    save_png(sweep_plot(sweep.to_json(), _UNITS[sweep.measure]), path)
    return path
