"""Run scenarios: every flag variant and peer, by every chosen measure.

Contract: run_scenario(scenario, scale, out_dir, mode, options) (RunOptions: the
rest; its fields may also come as keywords) builds (or reuses) the scenario's
dataset through data_gen and measures each variant (the flag variants and the peers: real
git, dulwich, our own CLI, all lab.workloads run by `python -m lab.worker`)
by the chosen measures (lab.measure): wall time (pyperf worker processes,
lab.measure.time) and/or instruction counts (callgrind, exact,
lab.measure.instructions, `jobs` workers at once), heap allocations (the
alloccount preload library, lab.measure.allocations, exact) and peak memory
(lab.measure.memory), each a lab.measure.context.Measure run by one driver
(measure_all) in phase order with a RunContext. It returns a lab.results.ScenarioResult
holding every raw value, summaries and the ratios: one row
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
  run in one lab.interleave process instead. (The schedule:
  lab.measure.time.round_orders.)

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
the values back from the pyperf files (lab.results, each measure's load), so
`reftable-lab report` and the harness read one format. Here: variant expansion
(expand, picked_labels), the options, the driver; the model and the ratios are
lab.results'.
"""
from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any, TypeVar

from reftable_core.flags import Flags

import data_gen
from gitbin import GitNotAvailable, find_git

from .builds import CoreBuild
from .countcache import Counter
from .measure import BenchError
from .measure.context import Measure, RunContext
from .measure.instructions import CountCache
from .measure.registry import REGISTRY, WORK, parse_measures
from .measure.time import round_orders
from .results import (
    Revisions,
    ScenarioResult,
    VariantResult,
    anchor_rows,
    build_title,
    c_comparisons,
    compute_ratios,
    row_published,
)
from .scenario import Scenario, Variant
from .scenarios import SCENARIOS

try:
    from tqdm import tqdm
except ImportError:  # pragma: no cover - tqdm is a declared dependency
    tqdm = None

__all__ = ["RunOptions", "expand", "measure_all", "picked_labels", "run_scenario"]

T = TypeVar("T")


def _pairs(items: Sequence[Any]) -> list[tuple[Any, Any]]:
    return list(pairwise(items))


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
        rows += c_comparisons(revisions)
    return out, envs, rows


def picked_labels(only: Sequence[str]) -> set[str]:
    """The labels `only` names: each item, and each run of consecutive items joined by
    commas (so that `--only a=off,b=off,all-on`, split at its commas, still picks the
    variant labelled "a=off,b=off")."""
    items = list(only)
    return {",".join(items[i:j]) for i in range(len(items)) for j in range(i + 1, len(items) + 1)}



@dataclass(frozen=True)
class RunOptions:
    """How run_scenario runs a scenario, beyond its scale, output directory and mode.

    measures: any of lab.measure.registry.MEASURES (a comma-separated string too).
    peers: measure the peers; only: the labels to measure (picked_labels);
    datasets_dir: where data_gen builds (default ./datasets; run_scenario makes it
    absolute: datasets_root()); progress: the progress bar (stderr).
    rounds: time in R interleaved rounds (None: sequential), their order from
    round_orders(labels, R, seed=f"{scenario name}/{order_seed}"); within_process:
    all rounds in one lab.interleave process. jobs: counted workers at once
    (default: the CPU count); counts: a CountCache shared across scenarios, so that
    a command is counted once. work: the untimed work pass of every flags variant,
    last. revisions: git builds as more git peers, core revisions or builds of the
    flags variants (see the module doc). counter: the counts' on-disk store and
    executor (lab.countcache.Counter; None: every count made here, none stored)."""
    measures: Sequence[str] | str = ("time",)
    peers: bool = True
    only: Sequence[str] | None = None
    datasets_dir: Path | str | None = None
    progress: bool = True
    rounds: int | None = None
    order_seed: int = 0
    within_process: bool = False
    jobs: int | None = None
    work: bool = True
    revisions: Revisions = field(default_factory=Revisions)
    counts: CountCache | None = None
    counter: Counter | None = None

    def check(self) -> None:
        """BenchError for options that do not go together."""
        if self.within_process and self.rounds is None:
            raise BenchError("--within-process needs --rounds")
        if self.rounds is not None and self.rounds < 1:
            raise BenchError(f"--rounds must be >= 1, not {self.rounds}")
        if self.within_process and (self.revisions.git or self.revisions.core):
            raise BenchError("--within-process runs every variant in one interpreter with one "
                             "git: not with --git-rev or --core-rev")


def datasets_root(datasets_dir: Path | str | None) -> Path:
    """The datasets folder, absolute (default: data_gen's ./datasets), taken once here
    from the options: the dataset's path reaches every counted process (the worker's
    --gitdir, a peer's --git-dir, its copies' sources) and a count depends on it, so a
    relative folder counted otherwise than a Dask worker, given the absolute one
    (lab.executors), under the same count key."""
    return Path(data_gen.DEFAULT_ROOT if datasets_dir is None else datasets_dir).resolve()


def _empty_result(ctx: RunContext, variant: Variant) -> VariantResult:
    kind = "peer" if variant.peer else "flags"
    spec = variant.workload if variant.peer else variant.flags.to_spec(only_changed_from=Flags())
    return VariantResult(variant.label, kind, spec, [], str(ctx.path(variant)),
                         benchmark=ctx.bench_name(variant))


def _pool(jobs: int) -> Callable[..., None]:
    """RunContext.each: fn over items, `jobs` at once (one at a time unless parallel)."""
    def each(fn: Callable[[T], None], items: Iterable[T], parallel: bool = True) -> None:
        with ThreadPoolExecutor(max_workers=max(1, jobs) if parallel else 1) as pool:
            for f in [pool.submit(fn, item) for item in items]:
                f.result()
    return each


def measure_all(ctx: RunContext, measures: Sequence[Measure], variants: Sequence[Variant],
                results: dict[str, VariantResult]) -> None:
    """The one driver: each measure, in phase order, over the variants, every figure
    into results (by label)."""
    def record(label: str, figures: Any) -> None:
        results[label].update(figures)
    for m in sorted(measures, key=lambda m: m.phase):
        m.run(ctx, variants, record)


def run_scenario(scenario: Scenario | str, scale: str = "small", out_dir: Path | str = "results",
                 mode: str = "fast", options: RunOptions | None = None,
                 **changes: Any) -> ScenarioResult:
    """Measure the scenario's variants (all, or the labels in options.only) and its peers
    by options.measures (RunOptions; its fields may be given as keywords, over options).

    Time, rounds=None: sequential, each variant's pyperf run complete in turn (mode:
    pyperf's --fast/--rigorous/...). rounds=R: R interleaved rounds (see the module
    doc; mode sets the values per round, ROUND_VALUES). within_process=True (with
    rounds): all rounds in one lab.interleave process, one value per variant and round
    (mode is then unused). Instructions: one callgrind worker per command, `jobs` at
    once; allocations the same way, under the alloccount preload; memory one worker at
    a time; then the work pass. `only` may name a variant by its label or by the label
    it was made from ("all-on" picks all-on@<each revision>, "git" every git build); a
    label with commas in it may come split at them (picked_labels).
    """
    opts = dataclasses.replace(options or RunOptions(), **changes)
    measures = (parse_measures(opts.measures) if isinstance(opts.measures, str)
                else tuple(opts.measures))
    opts.check()
    if isinstance(scenario, str):
        if scenario not in SCENARIOS:
            raise BenchError(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
        scenario = SCENARIOS[scenario]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    dataset = scenario.dataset(scale, datasets_root(opts.datasets_dir))
    params = scenario.params(scale)
    try:        # git found (or provisioned) once, before anything is counted: every
        find_git()          # worker and peer inherits REFTABLE_LAB_GIT (find_git sets it)
    except GitNotAvailable:
        pass                # a peer that needs git says so itself
    result = ScenarioResult(scenario.name, scale, str(dataset.path), params,
                            published=scenario.published, seed=scenario.seed, started=time.time(),
                            measures=list(measures), revisions=opts.revisions.to_json(),
                            unreproduced=dict(scenario.unreproduced),
                            cumulative=[list(step) for step in scenario.cumulative_steps(scale)])
    expanded, envs, comparisons = expand(scenario, scale, opts.revisions)
    picked = None if opts.only is None else picked_labels(opts.only)
    variants = [v for base, v in expanded
                if (picked is None or v.label in picked or base in picked)
                and (opts.peers or not v.peer)]
    if "time" in measures and opts.rounds is not None:
        result.round_order = round_orders([v.label for v in variants], opts.rounds,
                                          seed=f"{scenario.name}/{opts.order_seed}")
    chosen = [REGISTRY[m] for m in measures] + ([WORK] if opts.work else [])
    bar = None
    ctx = RunContext(scenario.name, dataset.gitdir, params, out, mode, rounds=opts.rounds,
                     order=tuple(tuple(o) for o in result.round_order),
                     within_process=opts.within_process,
                     trace_loops=opts.work and scenario.traces_loops(scale), envs=envs,
                     counts=opts.counts, each=_pool(opts.jobs or os.cpu_count() or 1),
                     counter=opts.counter.bind(scenario, scale, dataset.path)
                     if opts.counter else None)
    if tqdm:
        bar = tqdm(total=sum(m.steps(ctx, variants) for m in chosen), desc=scenario.name,
                   unit="run", file=sys.stderr, disable=not opts.progress)
        ctx = dataclasses.replace(ctx, progress=_bar_progress(bar))
    results = {v.label: _empty_result(ctx, v) for v in variants}
    result.variants = [results[v.label] for v in variants]
    try:
        measure_all(ctx, chosen, variants, results)
    finally:
        if bar:
            bar.close()
    result.ratios = compute_ratios(result, comparisons,
                                   row_published(scenario.row_published, result.revisions))
    anchor_rows(result.ratios, result.revisions.get("c_anchors", {}))
    result.elapsed = time.time() - result.started
    (out / f"{scenario.name}.result.json").write_text(json.dumps(result.to_json(), indent=1))
    return result


def _bar_progress(bar: Any) -> Callable[[str | None, int], None]:
    """RunContext.progress on a tqdm bar: the postfix, then the steps done."""
    def progress(text: str | None, done: int) -> None:
        if text is not None:
            bar.set_postfix_str(text)
        if done:
            bar.update(done)
    return progress
