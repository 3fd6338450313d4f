"""Run scenarios: every flag variant in pyperf worker processes, peers beside them.

Contract: run_scenario() builds (or reuses) the scenario's dataset through
data_gen, times each variant with `python -m lab.worker` (pyperf, worker
processes), times the peer commands (real git, dulwich, our own CLI) with
`python -m pyperf command`, and returns a ScenarioResult holding every raw
value plus summaries and ratios with bootstrap confidence intervals. Nothing
is printed here except the progress bar (stderr); reports are lab.report's job.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from reftable_core.flags import Flags

from .scenarios import SCENARIOS, Scenario, Variant
from .stats import ratio_ci, summarize

try:
    from tqdm import tqdm
except ImportError:  # pragma: no cover - tqdm is a declared dependency
    tqdm = None


class BenchError(RuntimeError):
    pass


@dataclass
class VariantResult:
    label: str
    kind: str                   # "flags" | "peer"
    spec: str                   # flags spec or command line
    values: list[float]
    json_path: str

    def summary(self) -> dict[str, float]:
        return summarize(self.values).as_dict()


@dataclass
class ScenarioResult:
    scenario: str
    scale: str
    dataset: str
    params: dict[str, Any]
    variants: list[VariantResult] = field(default_factory=list)
    ratios: list[dict[str, Any]] = field(default_factory=list)
    published: str = ""
    seed: str = ""
    started: float = 0.0
    elapsed: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario, "scale": self.scale, "dataset": self.dataset,
            "params": self.params, "published": self.published, "seed": self.seed,
            "started": self.started, "elapsed": self.elapsed,
            "variants": [{"label": v.label, "kind": v.kind, "spec": v.spec, "values": v.values,
                          "json": v.json_path, "summary": v.summary()} for v in self.variants],
            "ratios": self.ratios,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "ScenarioResult":
        r = cls(d["scenario"], d["scale"], d["dataset"], d["params"], published=d["published"],
                seed=d.get("seed", ""), started=d.get("started", 0.0), elapsed=d.get("elapsed", 0.0))
        r.variants = [VariantResult(v["label"], v["kind"], v["spec"], v["values"], v["json"])
                      for v in d["variants"]]
        r.ratios = d["ratios"]
        return r


def pyperf_mode_args(mode: str) -> list[str]:
    return {"fast": ["--fast"], "rigorous": ["--rigorous"], "normal": [],
            "quick": ["--processes", "3", "--values", "3", "--warmups", "1"]}[mode]


def load_values(json_path: Path) -> list[float]:
    import pyperf
    suite = pyperf.BenchmarkSuite.load(str(json_path))
    values: list[float] = []
    for bench in suite.get_benchmarks():
        values.extend(bench.get_values())
    return values


def _run(cmd: Sequence[str], env: dict[str, str] | None = None) -> None:
    proc = subprocess.run(list(cmd), capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise BenchError(f"command failed ({proc.returncode}): {' '.join(cmd)}\n"
                         f"{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")


def time_variant(scenario: Scenario, gitdir: Path, params: dict[str, Any], variant: Variant,
                 out_dir: Path, mode: str) -> VariantResult:
    out = out_dir / f"{scenario.name}.{variant.label}.json"
    out.unlink(missing_ok=True)
    workload = variant.workload or scenario.workload
    cmd = [sys.executable, "-m", "lab.worker", "--workload", workload,
           "--gitdir", str(gitdir), "--params", json.dumps(params),
           "--lab-flags", variant.flags.to_spec(), "--name", f"{scenario.name}[{variant.label}]",
           "-o", str(out), "--quiet", *pyperf_mode_args(mode)]
    _run(cmd)
    kind = "peer" if variant.workload else "flags"
    spec = workload if variant.workload else variant.flags.to_spec(only_changed_from=Flags())
    return VariantResult(variant.label, kind, spec, load_values(out), str(out))


def run_scenario(scenario: Scenario | str, scale: str = "small", out_dir: Path | str = "results",
                 mode: str = "fast", peers: bool = True, only: Sequence[str] | None = None,
                 datasets_dir: Path | str | None = None,
                 progress: bool = True) -> ScenarioResult:
    if isinstance(scenario, str):
        if scenario not in SCENARIOS:
            raise BenchError(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
        scenario = SCENARIOS[scenario]
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    dataset = scenario.dataset(scale, datasets_dir)
    params = scenario.params(scale)
    result = ScenarioResult(scenario.name, scale, str(dataset.path), params,
                            published=scenario.published, seed=scenario.seed, started=time.time())
    variants = [v for v in scenario.variants()
                if (only is None or v.label in only) and (peers or v.workload is None)]
    steps = len(variants)
    bar = tqdm(total=steps, desc=scenario.name, unit="run", file=sys.stderr,
               disable=not progress) if tqdm else None
    try:
        for v in variants:
            if bar:
                bar.set_postfix_str(v.label)
            result.variants.append(time_variant(scenario, dataset.gitdir, params, v, out_dir, mode))
            if bar:
                bar.update(1)
    finally:
        if bar:
            bar.close()
    result.ratios = compute_ratios(result, scenario.comparisons())
    result.elapsed = time.time() - result.started
    (out_dir / f"{scenario.name}.result.json").write_text(json.dumps(result.to_json(), indent=1))
    return result


def compute_ratios(result: ScenarioResult,
                   comparisons: Sequence[tuple[str, str, str]]) -> list[dict[str, Any]]:
    """comparisons: (title, slow_label, fast_label); ratio = slow/fast."""
    by_label = {v.label: v for v in result.variants}
    rows = []
    for title, slow, fast in comparisons:
        if slow in by_label and fast in by_label:
            r = ratio_ci(by_label[slow].values, by_label[fast].values)
            rows.append({"title": title, "slow": slow, "fast": fast, **r.as_dict()})
    return rows


def compare_files(a: Path, b: Path) -> dict[str, Any]:
    """Ratio mean(a)/mean(b) of two pyperf JSON files, with its CI."""
    va, vb = load_values(a), load_values(b)
    r = ratio_ci(va, vb)
    return {"a": str(a), "b": str(b), "a_summary": summarize(va).as_dict(),
            "b_summary": summarize(vb).as_dict(), **r.as_dict()}

