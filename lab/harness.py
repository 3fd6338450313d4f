"""Run scenarios: every flag variant and peer, by every chosen measure.

Contract: run_scenario() builds (or reuses) the scenario's dataset through
data_gen and measures each variant (the flag variants and the peers: real
git, dulwich, our own CLI, all lab.workloads run by `python -m lab.worker`)
by the chosen measures (lab.measure): wall time (pyperf worker processes,
lab.measure.time) and/or instruction counts (callgrind, exact,
lab.measure.instructions, `jobs` workers at once), heap allocations (the
alloccount preload library, lab.measure.allocations, exact) and peak memory
(lab.measure.memory). It returns a
ScenarioResult holding every raw value, summaries and the ratios: one row
per comparison and measure, time rows with t intervals and Holm-corrected
significance across the scenario's rows (lab.stats). Nothing is printed
here except the progress bar (stderr); reports are lab.report's job.

Revisions (lab.builds): with git builds, each build is one more peer beside
every git peer of the scenario (label git@<commit>, the same workload with
REFTABLE_LAB_GIT naming the build), compared with the next build and with
all-on; with core revisions, each flags variant runs at every revision
(label <variant>@<commit>, its worker on PYTHONPATH of that revision's
worktree) in place of this checkout, and the ratios compare consecutive
revisions variant by variant (and the peers with the last revision's
all-on). Core builds (lab.builds.CoreBuild: bench --core interpreted,compiled) stand
where core revisions do (labels <variant>@interpreted, <variant>@compiled); each
build has the scenario's own rows besides, titled "<title> [<build>]"
(build_title(), with the seed's figures, row_published()), so every flag's ratio is
shown under each build. Both are measured by every chosen measure, paired by round under
--rounds; within one process (--within-process) they cannot be (one
interpreter, one git).

After the measures, every flags variant runs once more, untimed, in a work
pass (`python -m lab.worker --work`): its reftable_core.counters snapshot and
the bytecodes of the hot loops become the variant's `work`, and each ratio row
says whether the studied work differs between its two variants (work_differs:
the counters lab.scenario.WORK_OF_FLAG names for the flags the two variants
set differently; None beside a peer, whose work the core does not count).

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
(<scenario>.interleave.json); instruction counts in
<scenario>.<label>.instructions.json (unit "integer", metadata
lab_measure="instructions"), allocation counts in
<scenario>.<label>.allocations.json (lab_measure="allocations", bytes in
lab_bytes_allocated), peak memory in <scenario>.<label>.memory.json (unit
"byte", lab_measure="memory"). A run's round is its "lab_round" metadata
(ROUND_KEY). <scenario>.result.json names those files and holds what pyperf
does not (scenario, dataset, parameters, round order, ratios); from_json reads
the values back from the pyperf files, so `reftable-lab report` and the
harness read one format.
"""
from __future__ import annotations

import json
import os
import random
import sys
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reftable_core.flags import Flags

from .builds import CoreBuild, CoreRev, GitBuild
from .measure import BenchError, parse_measures
from .measure import allocations as alloc_measure
from .measure import instructions as counting
from .measure import memory as memory_measure
from .measure.time import (
    ROUND_KEY,
    ROUND_VALUES,
    load_loops,
    load_runs,
    load_values,
    pyperf_mode_args,
    round_mode_args,
    rounds_benchmark,
    time_round,
    time_within_process,
    time_worker,
)
from .scenario import Scenario, Variant, studied_counters
from .scenarios import SCENARIOS
from .stats import ALPHA, holm, in_words, min_ratio, paired_ratio_ci, ratio_ci, summarize

try:
    from tqdm import tqdm
except ImportError:  # pragma: no cover - tqdm is a declared dependency
    tqdm = None

__all__ = [
    "ROUND_KEY",
    "ROUND_VALUES",
    "BenchError",
    "CountCache",
    "Revisions",
    "ScenarioResult",
    "VariantResult",
    "compare_files",
    "compute_ratios",
    "expand",
    "load_loops",
    "load_runs",
    "load_values",
    "pyperf_mode_args",
    "round_mode_args",
    "round_orders",
    "rounds_benchmark",
    "run_scenario",
    "work_differs",
    "work_variant",
]


@dataclass
class VariantResult:
    label: str
    kind: str                   # "flags" | "peer"
    spec: str                   # flags spec or command line
    values: list[float]         # wall seconds ([] when time was not measured)
    json_path: str              # the pyperf JSON file holding the values
    rounds: list[list[float]] = field(default_factory=list)   # interleaved: values per round
    benchmark: str = ""         # the benchmark's name in that file ("": its only one)
    instructions: float | None = None   # instructions of one run (None: not counted)
    instructions_json: str = ""          # the pyperf JSON file holding that count
    work: dict[str, int] = field(default_factory=dict)   # work counters of one run ({}: peer)
    allocations: float | None = None      # heap allocations of one run (None: not counted)
    bytes_allocated: float | None = None  # the bytes those allocations asked for
    allocations_json: str = ""            # the pyperf JSON file holding them
    memory: dict[str, int | None] = field(default_factory=dict)  # lab.measure.memory.Memory
    memory_json: str = ""                 # the pyperf JSON file holding it

    def summary(self) -> dict[str, float] | None:
        return summarize(self.values).as_dict() if self.values else None


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
    measures: list[str] = field(default_factory=lambda: ["time"])
    revisions: dict[str, Any] = field(default_factory=dict)   # Revisions.to_json()
    unreproduced: dict[str, str] = field(default_factory=dict)  # seed figure -> why no row
    cumulative: list[list[str]] = field(default_factory=list)   # [flag, label] per step

    def to_json(self) -> dict[str, Any]:
        """The result file's content (its format: README.md, "The result files"); each
        variant's values stay in its pyperf files (names relative to the result file)."""
        return {
            "scenario": self.scenario, "scale": self.scale, "dataset": self.dataset,
            "params": self.params, "published": self.published, "seed": self.seed,
            "started": self.started, "elapsed": self.elapsed, "round_order": self.round_order,
            "measures": self.measures, "revisions": self.revisions,
            "unreproduced": self.unreproduced, "cumulative": self.cumulative,
            "variants": [{"label": v.label, "kind": v.kind, "spec": v.spec,
                          "json": Path(v.json_path).name if v.values else "",
                          "benchmark": v.benchmark, "summary": v.summary(),
                          "instructions_json": Path(v.instructions_json).name
                          if v.instructions_json else "",
                          "instructions": v.instructions, "work": v.work,
                          "allocations_json": Path(v.allocations_json).name
                          if v.allocations_json else "",
                          "allocations": v.allocations, "bytes_allocated": v.bytes_allocated,
                          "allocations_per_record": per_record(v.allocations, self.params),
                          "memory_json": Path(v.memory_json).name if v.memory_json else "",
                          "memory": v.memory}
                         for v in self.variants],
            "ratios": self.ratios,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any], run_dir: Path | str = ".") -> ScenarioResult:
        """A result file's content, the values read from the pyperf files in run_dir.
        (Result files written before the values moved there hold them inline.)"""
        r = cls(d["scenario"], d["scale"], d["dataset"], d["params"], published=d["published"],
                seed=d.get("seed", ""), started=d.get("started", 0.0), elapsed=d.get("elapsed", 0.0),
                round_order=d.get("round_order", []), measures=d.get("measures", ["time"]),
                revisions=d.get("revisions", {}),
                unreproduced=d.get("unreproduced", {}), cumulative=d.get("cumulative", []))
        for v in d["variants"]:
            path = Path(run_dir) / Path(v["json"]).name if v.get("json") else Path("")
            name = v.get("benchmark", "")
            if "values" in v:
                values, rounds = v["values"], v.get("rounds", [])
            elif v.get("json"):
                values, rounds = load_runs(path, name)
            else:
                values, rounds = [], []
            res = VariantResult(v["label"], v["kind"], v["spec"], values,
                                str(path) if v.get("json") else "", rounds=rounds,
                                benchmark=name, work=dict(v.get("work", {})))
            if v.get("instructions_json"):
                res.instructions_json = str(Path(run_dir) / v["instructions_json"])
                res.instructions = counting.load_count(Path(res.instructions_json), name)
            if v.get("allocations_json"):
                res.allocations_json = str(Path(run_dir) / v["allocations_json"])
                res.allocations, res.bytes_allocated = alloc_measure.load(
                    Path(res.allocations_json), name)
            if v.get("memory_json"):
                res.memory_json = str(Path(run_dir) / v["memory_json"])
                res.memory = memory_measure.load(Path(res.memory_json), name).as_dict()
            r.variants.append(res)
        r.ratios = d["ratios"]
        return r


def per_record(value: float | None, params: dict[str, Any]) -> float | None:
    """value per record of the scenario's parameters (lab.measure.allocations.records)."""
    n = alloc_measure.records(params)
    return None if value is None or not n else value / n


@dataclass(frozen=True)
class Revisions:
    """What a run compares across revisions: git builds and reftable-core worktrees."""
    git: tuple[GitBuild, ...] = ()
    core: tuple[CoreRev | CoreBuild, ...] = ()   # revisions, or builds of this checkout

    def to_json(self) -> dict[str, Any]:
        return {"git": [{"label": b.label, "rev": b.rev, "commit": b.commit}
                        for b in self.git],
                "core": [{"suffix": f"@{c.short}", "rev": c.rev, "commit": c.commit,
                          "kind": "build" if isinstance(c, CoreBuild) else "revision"}
                         for c in self.core]}


def build_title(title: str, build: str) -> str:
    """A scenario row's title measured under one core build: "<title> [compiled]"."""
    return f"{title} [{build}]"


def row_published(published: Mapping[str, str], revisions: Mapping[str, Any]
                  ) -> dict[str, str]:
    """The seed's figures by row title, the rows of each core build included (revisions:
    Revisions.to_json(), as a result file holds it)."""
    builds = [c["rev"] for c in revisions.get("core", []) if c.get("kind") == "build"]
    return {**published, **{build_title(t, b): p for b in builds for t, p in published.items()}}


def _pairs(items: Sequence[Any]) -> list[tuple[Any, Any]]:
    return list(zip(items, items[1:]))


def expand(scenario: Scenario, scale: str, revisions: Revisions
           ) -> tuple[list[tuple[str, Variant]], dict[str, dict[str, str]],
                      list[tuple[str, str, str]]]:
    """The scenario's variants at the revisions: ([(base label, variant)], the extra
    environment of each variant's worker by label, the comparisons)."""
    out: list[tuple[str, Variant]] = []
    envs: dict[str, dict[str, str]] = {}
    base = scenario.variants(scale)
    flags = [v for v in base if not v.peer]
    for v in flags:
        if not revisions.core:
            out.append((v.label, v))
        for c in revisions.core:
            w = Variant(f"{v.label}@{c.short}", v.flags, v.workload)
            out.append((v.label, w))
            envs[w.label] = c.env()
    for v in base:
        if not v.peer:
            continue
        out.append((v.label, v))
        if v.label == "git":
            for b in revisions.git:
                w = Variant(b.label, Flags(), v.workload, peer=True)
                out.append((v.label, w))
                envs[w.label] = {"REFTABLE_LAB_GIT": str(b.git)}
    if not revisions.core:
        rows = scenario.comparisons(scale)
        all_on = "all-on"
    else:
        last = revisions.core[-1]
        all_on = f"all-on@{last.short}"
        rows = [(build_title(title, c.name), f"{slow}@{c.short}", f"{fast}@{c.short}")
                for c in revisions.core if isinstance(c, CoreBuild)
                for title, slow, fast in scenario.comparisons(scale)]
        rows += [(f"{v.label}: {a.rev} -> {b.rev}", f"{v.label}@{a.short}",
                  f"{v.label}@{b.short}")
                 for v in flags for a, b in _pairs(revisions.core)]
        rows += [(f"{v.label} over reftable-lab (all-on at {last.rev})", all_on, v.label)
                 for v in base if v.peer]
    if any(v.peer and v.label == "git" for v in base):
        rows += [(f"git: {a.rev} -> {b.rev}", a.label, b.label)
                 for a, b in _pairs(revisions.git)]
        rows += [(f"{b.label} ({b.rev}) over reftable-lab ({all_on})", all_on, b.label)
                 for b in revisions.git]
    return out, envs, rows


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


def _bench_name(scenario: Scenario, variant: Variant) -> str:
    return f"{scenario.name}[{variant.label}]"


def _worker_cmd(scenario: Scenario, gitdir: Path, params: dict[str, Any],
                variant: Variant) -> list[str]:
    return [sys.executable, "-m", "lab.worker", "--workload", variant.workload,
            "--gitdir", str(gitdir), "--params", json.dumps(params),
            "--lab-flags", variant.flags.to_spec(), "--name", _bench_name(scenario, variant),
            "--quiet"]


def _env(extra: Mapping[str, str] | None) -> dict[str, str] | None:
    """A worker's environment: ours with a variant's extra variables (None: ours)."""
    return {**os.environ, **extra} if extra else None


def _variant_json(scenario: Scenario, variant: Variant, out_dir: Path) -> Path:
    return out_dir / f"{scenario.name}.{variant.label}.json"


def _empty_result(scenario: Scenario, variant: Variant, out: Path) -> VariantResult:
    kind = "peer" if variant.peer else "flags"
    spec = variant.workload if variant.peer else variant.flags.to_spec(only_changed_from=Flags())
    return VariantResult(variant.label, kind, spec, [], str(out),
                         benchmark=_bench_name(scenario, variant))


# A cache of counts, shared by the caller across scenarios (run_scenario's `counts`):
# (workload, gitdir, params, flags, peer, worker env) -> its Count. A count is deterministic, so a
# variant another scenario already counted on the same dataset with the same parameters
# and flags (iterate-refs-memory's are show-ref-1table's; the odb grids share all-on,
# all-off and grid points with their walk) is reused: `bench` counts each command once.
CountCache = dict[tuple[str, str, str, str, bool, str], counting.Count]


def _count_key(gitdir: Path, params: dict[str, Any], variant: Variant,
               env: Mapping[str, str] | None = None) -> tuple[str, str, str, str, bool, str]:
    """A count's identity: a revision's worker (env) is another command."""
    return (variant.workload, str(gitdir), json.dumps(params, sort_keys=True),
            variant.flags.to_spec(), variant.peer, json.dumps(dict(env or {}), sort_keys=True))


def count_variant(scenario: Scenario, gitdir: Path, params: dict[str, Any], variant: Variant,
                  out_dir: Path, env: Mapping[str, str] | None = None,
                  counts: CountCache | None = None) -> tuple[float, Path]:
    """The instructions of one run of the variant's timed region (lab.measure.instructions;
    env: extra variables of its worker), written to <scenario>.<label>.instructions.json;
    (count, that file). A command already in `counts` (same workload, dataset,
    parameters, flags and environment) is not counted again; a new count is added to it."""
    key = _count_key(gitdir, params, variant, env)
    if counts is not None and key in counts:
        count = counts[key]
    else:
        cmd = [*_worker_cmd(scenario, gitdir, params, variant), "--count"]
        count = counting.count_worker(cmd, env=_env(env))
        if counts is not None:
            counts[key] = count
    out = out_dir / f"{scenario.name}.{variant.label}.instructions.json"
    counting.write_count(out, _bench_name(scenario, variant), count,
                         {"lab_workload": variant.workload, "lab_flags": variant.flags.to_spec()})
    return float(count.instructions), out


def _allocations_all(scenario: Scenario, gitdir: Path, params: dict[str, Any],
                     variants: Sequence[Variant], results: dict[str, VariantResult],
                     out_dir: Path, jobs: int, bar: Any,
                     envs: Mapping[str, Mapping[str, str]]) -> None:
    """Each variant's allocations (lab.measure.allocations), `jobs` at once, into
    <scenario>.<label>.allocations.json."""
    if not alloc_measure.available():
        raise BenchError("--measure allocations needs gcc (to build its preload library)")
    alloc_measure.library()

    def one(v: Variant) -> None:
        cmd = [*_worker_cmd(scenario, gitdir, params, v), "--allocations"]
        a = alloc_measure.count_allocations(cmd, env=_env(envs.get(v.label)), children=v.peer)
        out = out_dir / f"{scenario.name}.{v.label}.allocations.json"
        alloc_measure.write(out, _bench_name(scenario, v), a,
                            {"lab_workload": v.workload, "lab_flags": v.flags.to_spec()})
        res = results[v.label]
        res.allocations, res.bytes_allocated = float(a.allocations), float(a.bytes_allocated)
        res.allocations_json = str(out)
        if bar:
            bar.set_postfix_str(f"allocations {v.label}")
            bar.update(1)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for f in [pool.submit(one, v) for v in variants]:
            f.result()


def _memory_all(scenario: Scenario, gitdir: Path, params: dict[str, Any],
                variants: Sequence[Variant], results: dict[str, VariantResult],
                out_dir: Path, bar: Any, envs: Mapping[str, Mapping[str, str]]) -> None:
    """Each variant's peak memory (lab.measure.memory), one at a time (a busy
    machine does not change a peak, but parallel workers would share its RAM),
    into <scenario>.<label>.memory.json."""
    for v in variants:
        cmd = [*_worker_cmd(scenario, gitdir, params, v), "--memory"]
        mem = memory_measure.measure_memory(cmd, env=_env(envs.get(v.label)), children=v.peer)
        out = out_dir / f"{scenario.name}.{v.label}.memory.json"
        memory_measure.write(out, _bench_name(scenario, v), mem,
                             {"lab_workload": v.workload, "lab_flags": v.flags.to_spec()})
        res = results[v.label]
        res.memory, res.memory_json = mem.as_dict(), str(out)
        if bar:
            bar.set_postfix_str(f"memory {v.label}")
            bar.update(1)


def _count_all(scenario: Scenario, gitdir: Path, params: dict[str, Any],
               variants: Sequence[Variant], results: dict[str, VariantResult], out_dir: Path,
               jobs: int, bar: Any, envs: Mapping[str, Mapping[str, str]],
               counts: CountCache | None) -> None:
    if not counting.available():
        raise BenchError("--measure instructions needs valgrind (apt-get install valgrind)")
    # each distinct command once (two variants of one scenario may be one command),
    # `jobs` at once; then every variant's file from the counts
    counts = {} if counts is None else counts
    todo = {_count_key(gitdir, params, v, envs.get(v.label)): v for v in variants}
    todo = {key: v for key, v in todo.items() if key not in counts}
    # byte-code and lazy imports once per worker environment (revision), natively,
    # before the counted workers start (not when every count is already in `counts`)
    if todo:
        counting.compile_packages()
    for v in {tuple(sorted(envs.get(v.label, {}).items())): v for v in todo.values()}.values():
        counting.run_command([*_worker_cmd(scenario, gitdir, params, v), "--count"],
                             env=counting.count_env(_env(envs.get(v.label))))

    def one(v: Variant) -> None:
        count_variant(scenario, gitdir, params, v, out_dir, envs.get(v.label), counts)
        if bar:
            bar.set_postfix_str(f"instructions {v.label}")
            bar.update(1)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for f in [pool.submit(one, v) for v in todo.values()]:
            f.result()
    for v in variants:
        n, path = count_variant(scenario, gitdir, params, v, out_dir, envs.get(v.label), counts)
        results[v.label].instructions, results[v.label].instructions_json = n, str(path)
        if bar and todo.get(_count_key(gitdir, params, v, envs.get(v.label))) is not v:
            bar.update(1)


def work_variant(scenario: Scenario, gitdir: Path, params: dict[str, Any], variant: Variant,
                 out_dir: Path, trace_loops: bool = True,
                 env: Mapping[str, str] | None = None) -> dict[str, int]:
    """The work counters of one untimed run of the variant (lab.worker --work;
    trace_loops: with the hot loops' bytecodes; env: extra variables of its worker)."""
    out = out_dir / f"{scenario.name}.{variant.label}.work.json"
    counting.run_command([*_worker_cmd(scenario, gitdir, params, variant), "--work", str(out),
                          *(["--trace-loops"] if trace_loops else [])],
                         env=counting.count_env(_env(env)))
    work: dict[str, int] = json.loads(out.read_text())["work"]
    out.unlink()
    return work


def _work_all(scenario: Scenario, gitdir: Path, params: dict[str, Any],
              variants: Sequence[Variant], results: dict[str, VariantResult], out_dir: Path,
              jobs: int, bar: Any, scale: str, envs: Mapping[str, Mapping[str, str]]) -> None:
    trace = scenario.traces_loops(scale)

    def one(v: Variant) -> None:
        results[v.label].work = work_variant(scenario, gitdir, params, v, out_dir, trace,
                                             envs.get(v.label))
        if bar:
            bar.set_postfix_str(f"work {v.label}")
            bar.update(1)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for f in [pool.submit(one, v) for v in variants if not v.peer]:
            f.result()


def picked_labels(only: Sequence[str]) -> set[str]:
    """The labels `only` names: each item, and each run of consecutive items joined by
    commas (so that `--only a=off,b=off,all-on`, split at its commas, still picks the
    variant labelled "a=off,b=off")."""
    items = list(only)
    return {",".join(items[i:j]) for i in range(len(items)) for j in range(i + 1, len(items) + 1)}


def run_scenario(scenario: Scenario | str, scale: str = "small", out_dir: Path | str = "results",
                 mode: str = "fast", peers: bool = True, only: Sequence[str] | None = None,
                 datasets_dir: Path | str | None = None,
                 progress: bool = True, rounds: int | None = None,
                 order_seed: int = 0, within_process: bool = False,
                 measures: Sequence[str] | str = ("time",),
                 jobs: int | None = None, work: bool = True,
                 revisions: Revisions = Revisions(),
                 counts: CountCache | None = None) -> ScenarioResult:
    """Measure the scenario's variants (all, or the labels in `only`) and its peers.

    measures: any of lab.measure.MEASURES. Time, rounds=None:
    sequential, each variant's pyperf run complete in turn (mode: pyperf's
    --fast/--rigorous/...). rounds=R: R interleaved rounds (see the module
    doc; mode sets the values per round, ROUND_VALUES); the variant order
    comes from round_orders(labels, R, seed=f"{scenario name}/{order_seed}").
    within_process=True (with rounds): all rounds in one lab.interleave
    process, one value per variant and round (mode is then unused).
    Instructions: one callgrind worker per variant, `jobs` at once (default:
    the CPU count; counts do not depend on the machine's load; `counts`: a
    CountCache shared across scenarios, so that a command is counted once); allocations
    the same way, under the alloccount preload; memory one worker at a time. work: the
    untimed work pass of every flags variant (`jobs` at once), last.
    revisions: git builds as more git peers, core revisions of the flags variants
    (see the module doc); `only` may name a variant by its label or by the label it
    was made from ("all-on" picks all-on@<each revision>, "git" every git build); a
    label with commas in it may come split at them (picked_labels).
    """
    if isinstance(measures, str):
        measures = parse_measures(measures)
    if within_process and rounds is None:
        raise BenchError("--within-process needs --rounds")
    if rounds is not None and rounds < 1:
        raise BenchError(f"--rounds must be >= 1, not {rounds}")
    if within_process and (revisions.git or revisions.core):
        raise BenchError("--within-process runs every variant in one interpreter with one "
                         "git: not with --git-rev or --core-rev")
    if isinstance(scenario, str):
        if scenario not in SCENARIOS:
            raise BenchError(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
        scenario = SCENARIOS[scenario]
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    dataset = scenario.dataset(scale, datasets_dir)
    params = scenario.params(scale)
    result = ScenarioResult(scenario.name, scale, str(dataset.path), params,
                            published=scenario.published, seed=scenario.seed, started=time.time(),
                            measures=list(measures), revisions=revisions.to_json(),
                            unreproduced=dict(scenario.unreproduced),
                            cumulative=[list(step) for step in scenario.cumulative_steps(scale)])
    expanded, envs, comparisons = expand(scenario, scale, revisions)
    picked = None if only is None else picked_labels(only)
    variants = [v for base, v in expanded
                if (picked is None or v.label in picked or base in picked)
                and (peers or not v.peer)]
    results = {v.label: _empty_result(scenario, v, _variant_json(scenario, v, out_dir))
               for v in variants}
    result.variants = [results[v.label] for v in variants]
    steps = len(variants) * (((rounds or 1) if "time" in measures else 0)
                             + ("instructions" in measures) + ("allocations" in measures)
                             + ("memory" in measures)) \
        + (sum(not v.peer for v in variants) if work else 0)
    bar = tqdm(total=steps, desc=scenario.name, unit="run", file=sys.stderr,
               disable=not progress) if tqdm else None
    try:
        if "instructions" in measures and variants:
            _count_all(scenario, dataset.gitdir, params, variants, results, out_dir,
                       jobs or os.cpu_count() or 1, bar, envs, counts)
        if "allocations" in measures and variants:
            _allocations_all(scenario, dataset.gitdir, params, variants, results, out_dir,
                             jobs or os.cpu_count() or 1, bar, envs)
        if "memory" in measures and variants:
            _memory_all(scenario, dataset.gitdir, params, variants, results, out_dir, bar, envs)
        if "time" in measures:
            _time_all(scenario, dataset.gitdir, params, variants, results, out_dir, mode,
                      rounds, order_seed, within_process, result, bar, envs)
        if work:
            _work_all(scenario, dataset.gitdir, params, variants, results, out_dir,
                      jobs or os.cpu_count() or 1, bar, scale, envs)
    finally:
        if bar:
            bar.close()
    result.ratios = compute_ratios(result, comparisons,
                                   row_published(scenario.row_published,
                                                 result.revisions))
    result.elapsed = time.time() - result.started
    (out_dir / f"{scenario.name}.result.json").write_text(json.dumps(result.to_json(), indent=1))
    return result


def _time_all(scenario: Scenario, gitdir: Path, params: dict[str, Any],
              variants: Sequence[Variant], results: dict[str, VariantResult], out_dir: Path,
              mode: str, rounds: int | None, order_seed: int, within_process: bool,
              result: ScenarioResult, bar: Any, envs: Mapping[str, Mapping[str, str]]) -> None:
    def cmd(v: Variant) -> list[str]:
        return _worker_cmd(scenario, gitdir, params, v)
    if rounds is None:
        for v in variants:
            if bar:
                bar.set_postfix_str(v.label)
            res = results[v.label]
            res.values = time_worker(cmd(v), Path(res.json_path), mode,
                                     _env(envs.get(v.label)))
            if bar:
                bar.update(1)
        return
    by_label = {v.label: v for v in variants}
    for res in results.values():
        Path(res.json_path).unlink(missing_ok=True)
    result.round_order = round_orders(list(by_label), rounds,
                                      seed=f"{scenario.name}/{order_seed}")
    if within_process:
        out = out_dir / f"{scenario.name}.interleave.json"
        spec = {"gitdir": str(gitdir), "params": params, "warmups": 1,
                "order": result.round_order,
                "variants": [{"label": v.label, "name": _bench_name(scenario, v),
                              "workload": v.workload, "flags": v.flags.to_spec()}
                             for v in variants]}

        def progress(r: int, label: str) -> None:
            if bar:
                bar.set_postfix_str(f"round {r}/{rounds} {label}")
                bar.update(1)
        time_within_process(spec, out_dir / f"{scenario.name}.interleave-spec.json", out,
                            progress)
        for v in variants:
            res = results[v.label]
            res.json_path = str(out)
            res.values, res.rounds = load_runs(out, res.benchmark)
        return
    for r, order in enumerate(result.round_order, 1):
        for label in order:
            if bar:
                bar.set_postfix_str(f"round {r}/{rounds} {label}")
            res = results[label]
            res.values, res.rounds = time_round(cmd(by_label[label]), Path(res.json_path),
                                                res.benchmark, mode, _env(envs.get(label)))
            if bar:
                bar.update(1)


# The per-round estimate of paired ratios: "min" (see lab.stats.paired_ratio_ci).
PAIRED_PER_ROUND = "min"


def _side_names(slow: VariantResult, fast: VariantResult) -> tuple[str, str]:
    """The names a sentence gives the two sides: ours is "reftable-lab (label)" beside a peer."""
    def name(v: VariantResult, other: VariantResult) -> str:
        if v.kind != "peer" and other.kind == "peer":
            return f"reftable-lab ({v.label})"
        return v.label
    return name(slow, fast), name(fast, slow)


def compute_ratios(result: ScenarioResult, comparisons: Sequence[tuple[str, str, str]],
                   published: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """comparisons: (title, slow_label, fast_label); ratio = slow/fast, one row per
    comparison and measure both variants have.

    instructions, allocations: count(slow)/count(fast), exact ("estimator": "count";
    no interval, no test: a count is not a sample). time, interleaved (both variants with the
    same number, >= 2, of rounds): the geometric mean of the per-round ratios of
    each round's minimum, t interval over rounds ("estimator": "paired"; the
    ratio of the minima over all values beside it, "min_ratio", no interval);
    sequential: mean(slow)/mean(fast), Welch t interval ("estimator": "mean").
    Time rows are "significant" when their Holm-adjusted p-value ("p_holm",
    across the scenario's time rows) is below lab.stats.ALPHA.
    Every row: "measure", "in_words" (the faster side first), "published" (the
    seed's figure for the row, or None), "work_differs" (work_differs()).
    """
    by_label = {v.label: v for v in result.variants}
    published = published or {}
    rows: list[dict[str, Any]] = []
    for title, slow, fast in comparisons:
        if slow not in by_label or fast not in by_label:
            continue
        s, f = by_label[slow], by_label[fast]
        names = _side_names(s, f)
        common = {"title": title, "slow": slow, "fast": fast,
                  "published": published.get(title), "work_differs": work_differs(s, f)}
        for measure, sc, fc in (("instructions", s.instructions, f.instructions),
                                ("allocations", s.allocations, f.allocations)):
            if sc is not None and fc is not None and fc > 0:
                q = sc / fc
                rows.append({**common, "measure": measure, "ratio": q, "ci_low": q,
                             "ci_high": q, "p_value": None, "p_holm": None,
                             "significant": None, "estimator": "count", "exact": True,
                             "paired": False, "rounds": 0, "per_round": "",
                             "in_words": in_words(*names, q, measure)})
        if s.values and f.values:
            paired = len(s.rounds) >= 2 and len(s.rounds) == len(f.rounds)
            row: dict[str, Any] = {**common, "measure": "time", "exact": False}
            if paired:
                r = paired_ratio_ci(s.rounds, f.rounds, per_round=PAIRED_PER_ROUND)
                row.update(r.as_dict(), estimator="paired", min_ratio=min_ratio(s.values,
                                                                                f.values))
            else:
                row.update(ratio_ci(s.values, f.values).as_dict(), estimator="mean")
            row.update(paired=paired, rounds=len(s.rounds) if paired else 0,
                       per_round=PAIRED_PER_ROUND if paired else "",
                       in_words=in_words(*names, row["ratio"], "time"))
            rows.append(row)
    timed = [row for row in rows if row["measure"] == "time"]
    for row, p in zip(timed, holm([row["p_value"] for row in timed])):
        row["p_holm"] = p
        row["significant"] = p < ALPHA
    return rows


def _flags_of(v: VariantResult) -> Flags:
    return Flags().with_spec(v.spec)


def work_differs(a: VariantResult, b: VariantResult) -> bool | None:
    """Did a and b do different studied work? The studied counters are those
    lab.scenario.studied_counters names for the flags a and b set differently;
    True when one of them differs (a counter one side lacks counts as 0 there).
    None when it cannot be told: a peer, a variant without work counters, or no
    studied counter measured on either side."""
    if a.kind == "peer" or b.kind == "peer" or not a.work or not b.work:
        return None
    names = [n for n in studied_counters(_flags_of(a), _flags_of(b))
             if n in a.work or n in b.work]
    if not names:
        return None
    return any(a.work.get(n, 0) != b.work.get(n, 0) for n in names)


def compare_files(a: Path, b: Path) -> dict[str, Any]:
    """Ratio mean(a)/mean(b) of two pyperf JSON files, with its Welch t interval."""
    va, vb = load_values(a), load_values(b)
    r = ratio_ci(va, vb)
    return {"a": str(a), "b": str(b), "a_summary": summarize(va).as_dict(),
            "b_summary": summarize(vb).as_dict(), **r.as_dict(),
            "in_words": in_words(str(a), str(b), r.ratio)}
