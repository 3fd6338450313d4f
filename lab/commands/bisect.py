"""`reftable-lab bisect SCENARIO --git-src DIR --good A --bad B`: the first commit of a
git clone where the scenario's git peer does other work.

The count of a commit is the instructions of one run of the scenario's git peer (its
peer_workloads entry labelled "git"), run with that commit's build of --git-src
(lab.builds) in place of the provisioned git: the harness's own exact count
(lab.harness.run_scenario, --measure instructions, the build as a git revision; its
result files under --out/bisect-<scenario>/<commit>/). lab.recipes.bisect picks the
commits as git bisect does and stops at the first whose count differs from --good's by
more than --threshold (relative). Prints each tested commit's count, then the culprit's
id and subject. Exit 2 for bad input (one line), 1 when a count fails.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from reftable_core.flags import Flags

from lab.builds import BuildError, GitBuild
from lab.recipes import RecipeError, bisect
from lab.results import Revisions

PEER = "git"


def register(sub: argparse._SubParsersAction, add_flag_options: Callable) -> None:
    p = sub.add_parser("bisect", help="the first commit of a git clone where a scenario's "
                                      "git peer counts other instructions",
                       description="Bisect a local git clone by the exact instruction count "
                                   "of a scenario's git peer, each tested commit built.")
    add_flag_options(p)
    p.add_argument("scenario")
    p.add_argument("--git-src", required=True, metavar="DIR", help="a local clone of git.git")
    p.add_argument("--good", required=True, metavar="REV", help="a commit of the old count")
    p.add_argument("--bad", required=True, metavar="REV", help="a later commit, another count")
    p.add_argument("--threshold", type=float, default=0.05,
                   help="relative difference from --good's count that makes a commit bad")
    p.add_argument("--scale", default="small", choices=("small", "full"))
    p.add_argument("--measure", default="instructions", choices=("instructions",),
                   help="the count (instructions: exact, under callgrind)")
    p.add_argument("--out", default="results", help="results root")
    p.add_argument("--datasets", default=None, metavar="DIR", help="where datasets are built")
    p.add_argument("--jobs", type=int, default=None, help="make -j (default: the CPU count)")
    p.set_defaults(func=run_bisect)


def peer_count(scenario: str, scale: str, out: Path, datasets: str | None
               ) -> Callable[[GitBuild], int]:
    """count(build): the instructions of one run of the scenario's git peer with the
    build's git (the harness's count, cached across builds of one bisection)."""
    from lab.harness import RunOptions, run_scenario
    from lab.measure.instructions import CountCache
    counts: CountCache = {}

    def count(build: GitBuild) -> int:
        options = RunOptions(measures=("instructions",), only=[build.label],
                             datasets_dir=datasets, progress=False, work=False,
                             revisions=Revisions((build,)), counts=counts)
        result = run_scenario(scenario, scale, out / build.commit, options=options)
        (variant,) = [v for v in result.variants if v.label == build.label]
        if variant.instructions is None:
            raise RecipeError(f"{scenario}: no instruction count of {build.label}")
        return int(variant.instructions)
    return count


def run_bisect(args: argparse.Namespace, flags: Flags) -> int:
    from lab.measure import BenchError
    from lab.measure.instructions import available
    from lab.scenarios import SCENARIOS
    scenario = SCENARIOS.get(args.scenario)
    problem = None
    if args.flags is not None or args.baseline:
        problem = "--flags and --baseline do not apply: the count is the git peer's"
    elif scenario is None:
        problem = f"unknown scenario {args.scenario!r}; known: {', '.join(SCENARIOS)}"
    elif PEER not in dict(scenario.peer_workloads):
        problem = f"{args.scenario} has no {PEER} peer to count (it runs no git)"
    elif not available():
        problem = "--measure instructions needs valgrind and the detrand library"
    elif not 0 < args.threshold < 1:
        problem = f"--threshold {args.threshold:g}: not between 0 and 1"
    if problem:
        print(f"reftable-lab bisect: {problem}", file=sys.stderr)
        return 2
    count = peer_count(args.scenario, args.scale, Path(args.out) / f"bisect-{args.scenario}",
                       args.datasets)
    try:
        found = bisect(args.git_src, args.good, args.bad, count, args.threshold,
                       log=sys.stderr, jobs=args.jobs)
    except (BuildError, RecipeError) as e:
        print(f"reftable-lab bisect: {e}", file=sys.stderr)
        return 2
    except BenchError as e:
        print(f"reftable-lab bisect: {args.scenario}: {e}", file=sys.stderr)
        return 1
    good = found.tested[0][1]
    for commit, n in found.tested:
        verdict = "bad" if abs(n / good - 1) > args.threshold else "good"
        print(f"{commit}  {n:>14,d}  {n / good:.4f}x of --good's  {verdict}")
    print(f"first commit beyond {args.threshold:g}: {found.culprit} {found.subject}")
    print(f"{len(found.tested)} commits counted, {found.builds} builds, {found.seconds:.1f} s")
    return 0
