"""Run scenarios: every flag variant in pyperf worker processes, peers beside them.

Contract: run_scenario() builds (or reuses) the scenario's dataset through
data_gen, times each variant with `python -m lab.worker` (pyperf, worker
processes), times the peer commands (real git, dulwich, our own CLI) with
`python -m pyperf command`, and returns a ScenarioResult holding every raw
value plus summaries and ratios with bootstrap confidence intervals. Nothing
is printed here except the progress bar (stderr); reports are lab.report's job.

Two schedules:
- sequential (rounds=None): each variant is timed completely (pyperf: N worker
  processes x V values, by --mode), then the next one. Drift of the machine's
  speed over the run becomes a bias between variants.
- interleaved (rounds=R): R rounds; in each round every variant is timed once
  by one worker invocation (1 process, ROUND_VALUES[mode] values, 1 warm-up),
  appended to that variant's pyperf JSON (pyperf's --append). The variant order
  changes every round (a Williams design, seeded: over a full cycle each variant
  runs right after each other one equally often and in every position). The
  loop count pyperf calibrates in a variant's first round is kept for its later
  rounds. Every value is kept with its round, and ratios between variants are
  paired by round (lab.stats.paired_ratio_ci). With within_process, all rounds
  run in one lab.interleave process instead.

Results: every value is in pyperf JSON (its Run / Benchmark / BenchmarkSuite
model): one file per variant (<scenario>.<label>.json, one benchmark named
<scenario>[<label>]) or, within one process, one suite for all variants
(<scenario>.interleave.json). A run's round is its "lab_round" metadata
(ROUND_KEY). <scenario>.result.json names those files and holds what pyperf
does not (scenario, dataset, parameters, round order, ratios); from_json reads
the values back from the pyperf files, so `reftable-lab report` and the
harness read one format.
"""
from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import pyperf
from reftable_core.flags import Flags

from .scenarios import SCENARIOS, Scenario, Variant
from .stats import min_ratio_ci, paired_ratio_ci, ratio_ci, summarize

try:
    from tqdm import tqdm
except ImportError:  # pragma: no cover - tqdm is a declared dependency
    tqdm = None


class BenchError(RuntimeError):
    pass


# pyperf run metadata: the interleaved round (1, 2, ...) a run's values belong to
ROUND_KEY = "lab_round"


@dataclass
class VariantResult:
    label: str
    kind: str                   # "flags" | "peer"
    spec: str                   # flags spec or command line
    values: list[float]
    json_path: str              # the pyperf JSON file holding the values
    rounds: list[list[float]] = field(default_factory=list)   # interleaved: values per round
    benchmark: str = ""         # the benchmark's name in that file ("": its only one)

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
    round_order: list[list[str]] = field(default_factory=list)  # interleaved: labels per round

    def to_json(self) -> dict[str, Any]:
        """The result file's content; each variant's values stay in its pyperf file
        ("json": the file name, in the directory of the result file)."""
        return {
            "scenario": self.scenario, "scale": self.scale, "dataset": self.dataset,
            "params": self.params, "published": self.published, "seed": self.seed,
            "started": self.started, "elapsed": self.elapsed, "round_order": self.round_order,
            "variants": [{"label": v.label, "kind": v.kind, "spec": v.spec,
                          "json": Path(v.json_path).name, "benchmark": v.benchmark,
                          "summary": v.summary()}
                         for v in self.variants],
            "ratios": self.ratios,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any], run_dir: Path | str = ".") -> "ScenarioResult":
        """A result file's content, the values read from the pyperf files in run_dir.
        (Result files written before the values moved there hold them inline.)"""
        r = cls(d["scenario"], d["scale"], d["dataset"], d["params"], published=d["published"],
                seed=d.get("seed", ""), started=d.get("started", 0.0), elapsed=d.get("elapsed", 0.0),
                round_order=d.get("round_order", []))
        for v in d["variants"]:
            path = Path(run_dir) / Path(v["json"]).name
            name = v.get("benchmark", "")
            if "values" in v:
                values, rounds = v["values"], v.get("rounds", [])
            else:
                values, rounds = load_runs(path, name)
            r.variants.append(VariantResult(v["label"], v["kind"], v["spec"], values, str(path),
                                            rounds=rounds, benchmark=name))
        r.ratios = d["ratios"]
        return r


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


def round_orders(labels: Sequence[str], rounds: int, seed: int | str = 0) -> list[list[str]]:
    """The variant order of each interleaved round.

    A Williams design: rows i of the first row 0, 1, n-1, 2, n-2, ... shifted by i
    (mod n), plus the reversed rows when n is odd. Over a full cycle of rows (n,
    or 2n for odd n) every label is in every position equally often and runs
    right after every other label equally often. The rows' order and the labels'
    places are shuffled with `seed`; rounds beyond one cycle repeat it.
    """
    n = len(labels)
    if n == 0 or rounds <= 0:
        return [[] for _ in range(max(rounds, 0))]
    first = [0]
    lo, hi = 1, n - 1
    while lo <= hi:
        first.append(lo)
        if lo != hi:
            first.append(hi)
        lo, hi = lo + 1, hi - 1
    rows = [[(x + i) % n for x in first] for i in range(n)]
    if n % 2:
        rows += [row[::-1] for row in rows]
    rng = random.Random(seed)
    places = list(labels)
    rng.shuffle(places)
    rng.shuffle(rows)
    return [[places[x] for x in rows[r % len(rows)]] for r in range(rounds)]


def _run(cmd: Sequence[str], env: dict[str, str] | None = None) -> None:
    proc = subprocess.run(list(cmd), capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise BenchError(f"command failed ({proc.returncode}): {' '.join(cmd)}\n"
                         f"{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")


def _bench_name(scenario: Scenario, variant: Variant) -> str:
    return f"{scenario.name}[{variant.label}]"


def _worker_cmd(scenario: Scenario, gitdir: Path, params: dict[str, Any],
                variant: Variant) -> list[str]:
    return [sys.executable, "-m", "lab.worker", "--workload", variant.workload,
            "--gitdir", str(gitdir), "--params", json.dumps(params),
            "--lab-flags", variant.flags.to_spec(), "--name", _bench_name(scenario, variant),
            "--quiet"]


def _variant_json(scenario: Scenario, variant: Variant, out_dir: Path) -> Path:
    return out_dir / f"{scenario.name}.{variant.label}.json"


def _empty_result(scenario: Scenario, variant: Variant, out: Path) -> VariantResult:
    kind = "peer" if variant.peer else "flags"
    spec = variant.workload if variant.peer else variant.flags.to_spec(only_changed_from=Flags())
    return VariantResult(variant.label, kind, spec, [], str(out),
                         benchmark=_bench_name(scenario, variant))


def time_variant(scenario: Scenario, gitdir: Path, params: dict[str, Any], variant: Variant,
                 out_dir: Path, mode: str) -> VariantResult:
    out = _variant_json(scenario, variant, out_dir)
    out.unlink(missing_ok=True)
    _run([*_worker_cmd(scenario, gitdir, params, variant), "-o", str(out),
          *pyperf_mode_args(mode)])
    res = _empty_result(scenario, variant, out)
    res.values = load_values(out)
    return res


def time_round(scenario: Scenario, gitdir: Path, params: dict[str, Any], variant: Variant,
               res: VariantResult, mode: str) -> list[float]:
    """One interleaved round of a variant: append its values to res (and its pyperf JSON)."""
    out = Path(res.json_path)
    loops = load_loops(out) if res.rounds else None
    r = len(res.rounds) + 1
    _run([*_worker_cmd(scenario, gitdir, params, variant), "--round", str(r),
          "--append", str(out), *round_mode_args(mode, loops)])
    res.values, res.rounds = load_runs(out, res.benchmark)
    if len(res.rounds) != r:
        raise BenchError(f"{res.benchmark}: no values from round {r} in {out}")
    return res.rounds[-1]


def time_within_process(scenario: Scenario, gitdir: Path, params: dict[str, Any],
                        variants: Sequence[Variant], order: list[list[str]],
                        out_dir: Path, bar: Any = None) -> dict[str, VariantResult]:
    """Every round of every variant in one `python -m lab.interleave` process:
    one value per variant and round, consecutive values seconds apart."""
    spec_path = out_dir / f"{scenario.name}.interleave-spec.json"
    out = out_dir / f"{scenario.name}.interleave.json"
    out.unlink(missing_ok=True)
    spec = {"gitdir": str(gitdir), "params": params, "warmups": 1, "order": order,
            "variants": [{"label": v.label, "name": _bench_name(scenario, v),
                          "workload": v.workload, "flags": v.flags.to_spec()}
                         for v in variants]}
    spec_path.write_text(json.dumps(spec, indent=1))
    cmd = [sys.executable, "-m", "lab.interleave", "--spec", str(spec_path), "-o", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        if bar:
            r, label, _ = line.rstrip("\n").split("\t")
            bar.set_postfix_str(f"round {r}/{len(order)} {label}")
            bar.update(1)
    err = proc.stderr.read() if proc.stderr else ""
    if proc.wait() != 0:
        raise BenchError(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{err[-4000:]}")
    results = {}
    for v in variants:
        res = _empty_result(scenario, v, out)
        res.values, res.rounds = load_runs(out, res.benchmark)
        results[v.label] = res
    return results


def run_scenario(scenario: Scenario | str, scale: str = "small", out_dir: Path | str = "results",
                 mode: str = "fast", peers: bool = True, only: Sequence[str] | None = None,
                 datasets_dir: Path | str | None = None,
                 progress: bool = True, rounds: int | None = None,
                 order_seed: int = 0, within_process: bool = False) -> ScenarioResult:
    """Time the scenario's variants (all, or the labels in `only`) and its peers.

    rounds=None: sequential, each variant's pyperf run complete in turn (mode:
    pyperf's --fast/--rigorous/...). rounds=R: R interleaved rounds (see the
    module doc; mode sets the values per round, ROUND_VALUES); the variant order
    comes from round_orders(labels, R, seed=f"{scenario name}/{order_seed}").
    within_process=True (with rounds): all rounds in one lab.interleave process,
    one value per variant and round (mode is then unused).
    """
    if within_process and rounds is None:
        raise BenchError("--within-process needs --rounds")
    if rounds is not None and rounds < 1:
        raise BenchError(f"--rounds must be >= 1, not {rounds}")
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
                if (only is None or v.label in only) and (peers or not v.peer)]
    steps = len(variants) * (rounds or 1)
    bar = tqdm(total=steps, desc=scenario.name, unit="run", file=sys.stderr,
               disable=not progress) if tqdm else None
    try:
        if rounds is None:
            for v in variants:
                if bar:
                    bar.set_postfix_str(v.label)
                result.variants.append(time_variant(scenario, dataset.gitdir, params, v,
                                                    out_dir, mode))
                if bar:
                    bar.update(1)
        else:
            by_label = {v.label: v for v in variants}
            results = {}
            for v in variants:
                out = _variant_json(scenario, v, out_dir)
                out.unlink(missing_ok=True)
                results[v.label] = _empty_result(scenario, v, out)
            result.variants = list(results.values())
            result.round_order = round_orders(list(by_label), rounds,
                                              seed=f"{scenario.name}/{order_seed}")
            if within_process:
                results = time_within_process(scenario, dataset.gitdir, params, variants,
                                              result.round_order, out_dir, bar)
                result.variants = [results[v.label] for v in variants]
            for r, order in enumerate([] if within_process else result.round_order, 1):
                for label in order:
                    if bar:
                        bar.set_postfix_str(f"round {r}/{rounds} {label}")
                    time_round(scenario, dataset.gitdir, params, by_label[label],
                               results[label], mode)
                    if bar:
                        bar.update(1)
    finally:
        if bar:
            bar.close()
    result.ratios = compute_ratios(result, scenario.comparisons())
    result.elapsed = time.time() - result.started
    (out_dir / f"{scenario.name}.result.json").write_text(json.dumps(result.to_json(), indent=1))
    return result


# The per-round estimate of paired ratios: "min" (see lab.stats.paired_ratio_ci).
PAIRED_PER_ROUND = "min"


def compute_ratios(result: ScenarioResult,
                   comparisons: Sequence[tuple[str, str, str]]) -> list[dict[str, Any]]:
    """comparisons: (title, slow_label, fast_label); ratio = slow/fast.

    Interleaved runs (both variants with the same number, >= 2, of rounds):
    the ratio of the minima over all values (min_ratio_ci; "estimator": "min"),
    and beside it the ratio paired by round (paired_ratio_ci on each round's
    minimum: "paired_ratio", "paired_ci_low", "paired_ci_high"). Sequential
    runs: mean(slow)/mean(fast) over all values (ratio_ci; "estimator": "mean").
    """
    by_label = {v.label: v for v in result.variants}
    rows = []
    for title, slow, fast in comparisons:
        if slow in by_label and fast in by_label:
            s, f = by_label[slow], by_label[fast]
            paired = len(s.rounds) >= 2 and len(s.rounds) == len(f.rounds)
            row: dict[str, Any] = {"title": title, "slow": slow, "fast": fast}
            if paired:
                row.update(min_ratio_ci(s.values, f.values).as_dict(), estimator="min")
                p = paired_ratio_ci(s.rounds, f.rounds, per_round=PAIRED_PER_ROUND)
                row.update(paired_ratio=p.ratio, paired_ci_low=p.ci_low,
                           paired_ci_high=p.ci_high)
            else:
                row.update(ratio_ci(s.values, f.values).as_dict(), estimator="mean")
            row.update(paired=paired, rounds=len(s.rounds) if paired else 0,
                       per_round=PAIRED_PER_ROUND if paired else "")
            rows.append(row)
    return rows


def compare_files(a: Path, b: Path) -> dict[str, Any]:
    """Ratio mean(a)/mean(b) of two pyperf JSON files, with its CI."""
    va, vb = load_values(a), load_values(b)
    r = ratio_ci(va, vb)
    return {"a": str(a), "b": str(b), "a_summary": summarize(va).as_dict(),
            "b_summary": summarize(vb).as_dict(), **r.as_dict()}

