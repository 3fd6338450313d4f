"""`reftable-lab bench | compare | report | profile`: drive the lab.

bench    run scenarios (every flag variant and the peers) by --measure time
         (pyperf workers; --rounds R interleaves the variants and pairs the ratios
         by round), instructions (callgrind, exact; the default at --scale
         small), allocations (a malloc-counting preload library, exact) and/or
         memory (peak RSS, tracemalloc peak) and write <out>/<run>/report.md
         with plots; --sweep KEY=V1,V2,... runs each scenario at every size and
         plots cost against size (log-log, fitted exponents; lab.sweep);
         --git-src DIR --git-rev A --git-rev B adds git built at each revision
         (lab.builds) beside every git peer; --core-rev A --core-rev B runs the
         flags variants at two commits of this repository; --core compiled (or
         interpreted,compiled) runs them under reftable_core built by mypyc
         (lab.builds.compiled_core), each flag's ratio per build; every run appends to
         <out>/index.jsonl, and --export bmf writes <run>/bmf.json (lab.export)
compare  ratio of two pyperf JSON result files of one measure, with a Welch t interval
report   re-render the report of a finished run directory

bench, compare and report refuse --flags and --baseline: a scenario defines
its variants (all-on, all-off, each flag alone, ...) itself, and a result
file's flags are fixed; `--only LABELS` picks variants, `profile --flags`
and the other commands take flags.
profile  line_profiler / scalene / cProfile on one scenario's workload
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

from reftable_core.flags import Flags

from gitbin import REPO_ROOT
from lab.builds import BuildError, CoreBuild, CoreRev, build_all, core_build, core_rev
from lab.countcache import Counter, CountStore
from lab.executors import open_executor, parse_executor
from lab.export import append_index, write_bmf
from lab.harness import RunOptions, run_scenario
from lab.results import Revisions, ScenarioResult
from lab.scenario import Scenario

_REFUSED = ("{cmd} builds no flags of its own: --flags and --baseline do not apply (a "
            "scenario defines its variants: all-on, all-off, each flag alone; pick them "
            "with bench --only LABELS; see `reftable-lab bench --list`)")


def _refuse_flags(cmd: str, args: argparse.Namespace) -> bool:
    """True (after the message) when --flags or --baseline was given to cmd."""
    if getattr(args, "flags", None) is not None or getattr(args, "baseline", False):
        print(f"reftable-lab {cmd}: " + _REFUSED.format(cmd=cmd), file=sys.stderr)
        return True
    return False


def default_measure(args: argparse.Namespace) -> str:
    """instructions at --scale small (exact, a few minutes) when valgrind is there and
    no wall-time schedule (--rounds) was asked for; time otherwise."""
    from lab.measure.instructions import available
    if args.scale == "small" and args.rounds is None and not args.within_process \
            and available():
        return "instructions"
    return "time"


def chosen_measures(args: argparse.Namespace) -> tuple[str, ...]:
    """Every --measure given (each may list several), in order, each once; the default
    when none is (ValueError: an unknown name)."""
    from lab.measure.registry import parse_measures
    return parse_measures(",".join(args.measure) if args.measure else default_measure(args))


def register(sub: argparse._SubParsersAction, add_flag_options: Callable) -> None:
    p = sub.add_parser("bench", help="run scenarios with each flag on and off, peers beside them",
                       description="Measure each scenario's variants (all-on, all-off, each "
                                   "flag alone, ...) and peers. --flags/--baseline are refused: "
                                   "the scenario defines the variants (use --only).")
    add_flag_options(p)
    p.add_argument("--measure", default=None, metavar="M[,M]", action="append",
                   help="time, instructions, allocations, memory, or several comma-separated "
                        "or repeated (--measure allocations --measure memory: both) "
                        "(default: instructions at --scale small when valgrind is installed "
                        "and --rounds is not given, else time). instructions: callgrind counts "
                        "of one run, exact and repeatable on a busy machine; allocations: heap "
                        "allocations and bytes of one run (per record in the report), for the "
                        "Python variants and git alike; memory: peak RSS above the worker's "
                        "own, and the tracemalloc peak")
    p.add_argument("--jobs", type=int, default=None,
                   help="instruction or allocation counts made at once (default: the CPU "
                        "count)")
    p.add_argument("--executor", default="local", metavar="E",
                   help="where counts are made: local[:N] (this machine, N at once; default: "
                        "--jobs or the CPU count), dask-local:N (a Dask LocalCluster of N "
                        "workers) or dask://HOST:PORT (a running Dask scheduler; its workers "
                        "need this checkout, same environment). Wall time always runs here. "
                        "Dask: pip install 'reftable-lab[dask]' (lab.executors)")
    p.add_argument("--no-cache", action="store_true",
                   help="recount every instruction and allocation count (default: reuse the "
                        "counts stored under <cache>/counts whose every input is unchanged, "
                        "and store new ones; lab.countcache)")
    p.add_argument("--sweep", default=None, metavar="KEY=V1,V2,...",
                   help="run each scenario with parameter KEY at each value (e.g. "
                        "refs=1e3,1e4,1e5) and plot the first measure against it on log-log "
                        "axes, per variant and peer, with the fitted exponent (n^k; k >= 1.5 "
                        "is flagged as quadratic)")
    p.add_argument("--git-src", default=None, metavar="DIR",
                   help="a local clone of git.git: with --git-rev, git built at each revision "
                        "(out of tree, cached by commit under ~/.cache/reftable-lab/builds) "
                        "runs as one more peer, git@<commit>, beside every git peer")
    p.add_argument("--git-rev", action="append", default=[], metavar="REV",
                   help="a revision of --git-src to build and measure (repeat: A, B)")
    p.add_argument("--c-anchors", action="store_true",
                   help="with --git-src: build real git's C before and after each seed row "
                        "that has a recipe (lab.c_recipes: a commit and its parent, or a "
                        "series cherry-picked or reverted step by step; cached by tree) and "
                        "measure the row's git workload with both, by the same measures: "
                        "each row gains c_ratio, same_direction_as_c and magnitude_error")
    p.add_argument("--core-rev", action="append", default=[], metavar="REV",
                   help="run the flags variants at this commit of the repository (repeat: "
                        "A, B; a git worktree of each under the cache); the ratios compare "
                        "the revisions variant by variant, paired by round with --rounds")
    p.add_argument("--core", default=None, metavar="BUILD[,BUILD]",
                   help="interpreted (default), compiled (reftable_core built by mypyc, out "
                        "of tree, cached under ~/.cache/reftable-lab/compiled-core; made on "
                        "first use), or interpreted,compiled: the flags variants run under "
                        "each build (all-on@compiled, ...), each flag's ratio shown per build "
                        "and the builds compared variant by variant")
    p.add_argument("--core-src", default=None, metavar="DIR",
                   help="the repository --core-rev names commits of (default: this checkout)")
    p.add_argument("--export", default=None, choices=["bmf"],
                   help="bmf: also write <run>/bmf.json, Bencher Metric Format (latency, "
                        "instructions, allocations, peak-memory per variant)")
    p.add_argument("scenarios", nargs="*", help="scenario names or sets (default: all; first: one "
                   "per seed and upstream commit, make bench's default); see --list")
    p.add_argument("--list", action="store_true", help="list scenarios and exit")
    p.add_argument("--scale", default="small", help="dataset scale: small (CI-sized) or full")
    p.add_argument("--mode", default="fast", choices=["quick", "fast", "normal", "rigorous"],
                   help="pyperf effort (default fast); with --rounds: values per variant "
                        "per round (quick 3, fast 3, normal 5, rigorous 6)")
    p.add_argument("--rounds", type=int, default=None, metavar="R",
                   help="interleave: R rounds, each timing every variant once (one pyperf "
                        "process) in a changing order; ratios paired by round. For per-flag "
                        "effects of a few %% on a machine whose speed drifts")
    p.add_argument("--within-process", action="store_true",
                   help="with --rounds: time every variant in one process, one value per "
                        "variant and round, so consecutive values are seconds apart (for a "
                        "machine whose speed changes over minutes)")
    p.add_argument("--out", default="results", help="results root directory")
    p.add_argument("--datasets", default=None,
                   help="datasets root (default ./datasets); made absolute before anything "
                        "is counted (a count depends on the dataset's path)")
    p.add_argument("--no-peers", action="store_true", help="skip git/dulwich/CLI peers")
    p.add_argument("--only", default=None,
                   help="comma-separated variant labels to run (a label with commas in it "
                        "is given as it is)")
    p.set_defaults(func=run_bench)

    # compare and report read finished files, whose flags are fixed: --flags and
    # --baseline are there to be refused in words
    for name, func, what, summary, files, whose in (
            ("compare", run_compare, "speed-up of B over A from two pyperf JSON files",
             "Ratio mean(A)/mean(B) with its Welch t interval (counts: the quotient), as "
             "pyperf compare_to's table (--json: one object); files of different measures, "
             "units or workloads are refused.", ("a", "b"), "the files'"),
            ("report", run_report, "re-render report.md and plots for a run directory",
             "Re-render a run directory's report.", ("run_dir",), "the results'")):
        c = sub.add_parser(name, help=what, description=f"{summary} --flags/--baseline are "
                                                         f"refused ({whose} flags are fixed).")
        add_flag_options(c)
        for arg in files:
            c.add_argument(arg, type=Path)
        c.set_defaults(func=func)
        if name == "compare":
            c.add_argument("--json", action="store_true",
                           help="print the comparison as one JSON object (default: a table)")

    f = sub.add_parser("profile", help="profile one scenario's workload")
    add_flag_options(f)
    f.add_argument("scenario")
    f.add_argument("--tool", default="line", choices=["line", "cprofile", "scalene"])
    f.add_argument("--scale", default="small")
    f.add_argument("--loops", type=int, default=1)
    f.add_argument("--out", type=Path, default=None, help="output text file")
    f.add_argument("--datasets", default=None)
    f.set_defaults(func=run_profile)


def run_bench(args: argparse.Namespace, flags: Flags) -> int:
    from lab.measure import BenchError
    from lab.scenarios import SCENARIOS as scenarios
    from lab.scenarios import SETS, expand_names
    if _refuse_flags("bench", args):
        return 2
    try:
        measures = chosen_measures(args)
    except ValueError as e:
        print(f"reftable-lab bench: --measure: {e}", file=sys.stderr)
        return 2
    if args.list:
        for name, s in scenarios.items():
            print(f"{name:28s} seed {s.seed:8s} preset {s.preset:16s} {s.description}")
        for name, members in SETS.items():
            print(f"{name:28s} set: {' '.join(members)}")
        return 0
    names = expand_names(args.scenarios or list(scenarios))
    unknown = [n for n in names if n not in scenarios]
    if unknown:
        print(f"reftable-lab bench: unknown scenario(s): {', '.join(unknown)}; "
              f"known: {', '.join(scenarios)}; sets: {', '.join(SETS)}", file=sys.stderr)
        return 2
    try:
        revisions = _revisions(args)
    except BuildError as e:
        print(f"reftable-lab bench: {e}", file=sys.stderr)
        return 2
    run_dir = Path(args.out) / time.strftime(f"%Y%m%d-%H%M%S-{args.scale}")
    only = args.only.split(",") if args.only else None
    try:
        spec = parse_executor(args.executor)
        executor = open_executor(spec)
    except (ValueError, BenchError) as e:
        print(f"reftable-lab bench: {e}", file=sys.stderr)
        return 2
    counter = Counter(None if args.no_cache else CountStore(), executor, run=run_dir.name)
    options = dataclasses.replace(_options(args, measures, only, revisions), counter=counter)
    if spec.kind == "local" and spec.workers and args.jobs is None:
        options = dataclasses.replace(options, jobs=spec.workers)
    try:
        if args.sweep:
            return _run_sweeps(args, names, run_dir, options)
        return _run_all(args, names, run_dir, options)
    finally:
        if executor is not None:
            executor.close()


def _run_all(args: argparse.Namespace, names: list[str], run_dir: Path,
             options: RunOptions) -> int:
    """Every named scenario by options, then the exports, the report and the summary."""
    from lab.measure import BenchError
    from lab.measure.instructions import CountCache
    from lab.report import render, row_words, warnings
    from lab.scenarios import SCENARIOS as scenarios
    results = []
    revisions = options.revisions
    counts: CountCache = {}       # a command shared by two scenarios is counted once
    for name in names:
        try:
            scenario_options = dataclasses.replace(
                options, counts=counts,
                revisions=_anchored(args, scenarios[name], revisions))
            results.append(run_scenario(scenarios[name], args.scale, run_dir, args.mode,
                                        scenario_options))
        except (BenchError, BuildError, KeyError) as e:
            print(f"reftable-lab bench: {name}: {e}", file=sys.stderr)
            return 1
    _exports(args, run_dir, results)
    report = render(results, run_dir)
    for r in results:
        cached = sorted({o["run"] for v in r.variants for o in v.cached.values()})
        if cached:
            n = sum(len(v.cached) for v in r.variants)
            print(f"== {r.scenario}: {n} count(s) from the cache (runs {', '.join(cached)})")
        print(f"== {r.scenario} ({r.scale}, {','.join(r.measures)})  published: {r.published}")
        for q in r.ratios:
            if q.get("work_differs") is False:
                detail = f"{q['measure']}: identical studied work, not a speed-up"
            elif q.get("estimator") == "count":
                detail = f"{q['ratio']:.4f}x exact ({q['measure']})"
            else:
                est = f"paired, {q['rounds']} rounds" if q.get("paired") else "mean"
                detail = (f"{q['ratio']:.3f}x [{q['ci_low']:.3f}, {q['ci_high']:.3f}] time, "
                          f"{est}, {'significant' if q['significant'] else 'not significant'}"
                          f" (Holm)")
            print(f"   {q['title']:44s} {row_words(q)}  ({detail})")
        for w in warnings(r):
            print(f"   {w}")
    print(f"report: {report}")
    return 0


def _options(args: argparse.Namespace, measures: tuple[str, ...], only: list[str] | None,
             revisions: Revisions) -> RunOptions:
    """The run options bench's arguments name (lab.harness.RunOptions)."""
    return RunOptions(measures=measures, peers=not args.no_peers, only=only,
                      datasets_dir=args.datasets, rounds=args.rounds,
                      within_process=args.within_process, jobs=args.jobs, revisions=revisions)


def _revisions(args: argparse.Namespace) -> Revisions:
    """The git builds (made or reused now) and core worktrees the options name;
    BuildError (one line) for a bad source or revision."""
    if args.git_rev and not args.git_src:
        raise BuildError("--git-rev needs --git-src DIR (a local clone of git.git)")
    if args.c_anchors and not args.git_src:
        raise BuildError("--c-anchors needs --git-src DIR (a local clone of git.git)")
    if args.git_src and not args.git_rev and not args.c_anchors:
        raise BuildError("--git-src needs at least one --git-rev (or --c-anchors)")
    if args.core_src and not args.core_rev:
        raise BuildError("--core-src needs at least one --core-rev")
    builds = list(dict.fromkeys(args.core.split(","))) if args.core else []
    if builds and args.core_rev:
        raise BuildError("--core builds this checkout's core: not with --core-rev")
    git = build_all(args.git_src, args.git_rev) if args.git_rev else []
    core: list[CoreRev | CoreBuild] = [core_rev(args.core_src or REPO_ROOT, rev)
                                       for rev in args.core_rev]
    if builds != ["interpreted"]:                   # the checkout as it runs: no variants
        core += [core_build(name) for name in builds]
    return Revisions(tuple(git), tuple(dict.fromkeys(core)))


def _anchored(args: argparse.Namespace, scenario: Scenario, revisions: Revisions) -> Revisions:
    """revisions with the scenario's real-C builds (--c-anchors): each row's recipe
    built (or reused) now, its two builds among the git builds (one peer each, however
    many rows share it) and the row's anchor."""
    if not args.c_anchors or not scenario.c_recipes:
        return revisions
    from lab.recipes import build_recipe
    print(f"== {scenario.name}: real C, {len(scenario.c_recipes)} rows", file=sys.stderr)
    anchors = []
    git = list(revisions.git)
    for title, recipe in scenario.c_recipes.items():
        before, after = (build_recipe(args.git_src, r) for r in (recipe.before, recipe.after))
        anchors.append((title, before, after))
        git += [b for b in (before, after) if b.commit not in {g.commit for g in git}]
    return dataclasses.replace(revisions, git=tuple(git), c_anchors=tuple(anchors))


def _exports(args: argparse.Namespace, run_dir: Path, results: list[ScenarioResult]) -> None:
    """The run's entry in <out>/index.jsonl, and <run>/bmf.json with --export bmf."""
    run_dir.mkdir(parents=True, exist_ok=True)
    index = append_index(Path(args.out), run_dir, results)
    print(f"index: {index}")
    if args.export == "bmf":
        print(f"bmf: {write_bmf(results, run_dir)}")


def _run_sweeps(args: argparse.Namespace, names: list[str], run_dir: Path,
                options: RunOptions) -> int:
    from lab.measure import BenchError
    from lab.scenarios import SCENARIOS as scenarios
    from lab.sweep import parse_sweep, run_sweep, write
    results: list[ScenarioResult] = []
    try:
        key, sizes = parse_sweep(args.sweep)
    except ValueError as e:
        print(f"reftable-lab bench: {e}", file=sys.stderr)
        return 2
    for name in names:
        try:
            sweep = run_sweep(scenarios[name], key, sizes, args.scale, run_dir / name,
                              options, mode=args.mode)
        except (BenchError, KeyError) as e:
            print(f"reftable-lab bench: {name}: {e}", file=sys.stderr)
            return 1
        plot = write(sweep, run_dir)
        results += sweep.results
        print(f"== {name}: {sweep.measure} against {key} = {', '.join(map(str, sizes))}")
        for line in sweep.sentences():
            print(f"   {line}")
        print(f"plot: {plot}")
    _exports(args, run_dir, results)
    return 0


def run_compare(args: argparse.Namespace, flags: Flags) -> int:
    from lab.results import NotComparable, compare_files, compare_table, read_measured
    if _refuse_flags("compare", args):
        return 2
    for path in (args.a, args.b):
        try:
            read_measured(path)
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:  # of any shape
            print(f"reftable-lab compare: {path}: not a pyperf result file ({e})", file=sys.stderr)
            return 2
    try:
        res = compare_files(args.a, args.b)
    except NotComparable as e:
        print(f"reftable-lab compare: {e}", file=sys.stderr)
        return 2
    print(json.dumps(res, indent=1) if args.json else compare_table(res))
    return 0


def run_report(args: argparse.Namespace, flags: Flags) -> int:
    from lab.report import load_results, render
    from lab.results import compute_ratios, row_published
    from lab.scenarios import SCENARIOS as scenarios
    if _refuse_flags("report", args):
        return 2
    results = load_results(args.run_dir)
    if not results:
        print(f"reftable-lab report: no *.result.json in {args.run_dir}", file=sys.stderr)
        return 1
    for r in results:       # ratios recomputed from the raw values, with today's estimators
        if r.scenario in scenarios:
            s = scenarios[r.scenario]
            rows = s.comparisons(r.scale)
            if r.revisions.get("git") or r.revisions.get("core"):   # the run's own rows
                rows = list(dict.fromkeys((q["title"], q["slow"], q["fast"]) for q in r.ratios))
            r.ratios = compute_ratios(r, rows, row_published(s.row_published, r.revisions))
    print(render(results, args.run_dir))
    return 0


def run_profile(args: argparse.Namespace, flags: Flags) -> int:
    from lab.profiling import PROFILERS
    from lab.scenarios import SCENARIOS as scenarios
    if args.scenario not in scenarios:
        print(f"reftable-lab profile: unknown scenario {args.scenario}", file=sys.stderr)
        return 2
    out = args.out or Path(f"profile-{args.scenario}-{args.tool}.txt")
    PROFILERS[args.tool](scenarios[args.scenario], args.scale, flags, out, args.loops,
                         Path(args.datasets) if args.datasets else None)
    sys.stdout.write(out.read_text())
    return 0
