#!/usr/bin/env python3
"""Apply every real-C recipe of lab.scenarios (Scenario.c_recipes) in a scratch worktree
of a local clone of git.git and report, per recipe, whether each step applies cleanly.

  PYTHONPATH=core:. python scripts/verify_c_recipes.py --clone /path/to/git.git-clone

The clone is written to (cherry-picks and reverts make commits, on a detached HEAD of a
scratch worktree under <clone>/.. unless --worktree names one; the worktree is removed at
the end); never point it at a mirror you must not write to: make a clone first
(git clone --shared MIRROR CLONE). Each distinct Recipe is applied once, from its base,
its steps in order; a step that conflicts (or fails) stops that recipe and is named.
The report gives, per recipe, the resulting commit's tree id (so that a series' steps
can be seen to chain: one row's "after" is the next row's "before"). Exit status 1 when
any recipe does not apply. --recipe "BASE + STEP + STEP" tries one recipe instead.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "core"), str(ROOT)]

from lab.c_recipes import Recipe


def _git(wt: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(wt), *args], capture_output=True, text=True, check=False)


def _clean(wt: Path) -> None:
    for op in ("cherry-pick", "revert"):
        _git(wt, op, "--abort")
    _git(wt, "reset", "-q", "--hard")


def apply(wt: Path, recipe: Recipe) -> tuple[bool, str, str]:
    """(applied, failed step or "", tree id of the result or "") for recipe in wt."""
    _clean(wt)
    r = _git(wt, "checkout", "-q", "-f", "--detach", recipe.base)
    if r.returncode:
        return False, f"base {recipe.base}: {r.stderr.strip()}", ""
    for step in recipe.steps:
        kind, _, rev = step.partition(" ")
        args = ["cherry-pick", rev] if kind == "cherry-pick" else ["revert", "--no-edit", rev]
        r = _git(wt, *args)
        if r.returncode:
            conflicts = _git(wt, "diff", "--name-only", "--diff-filter=U").stdout.split()
            lines = (r.stderr.strip() or r.stdout.strip() or "failed").splitlines()
            why = f"conflicts in {', '.join(conflicts)}" if conflicts else lines[-1]
            _clean(wt)
            return False, f"{step}: {why}", ""
    tree = _git(wt, "rev-parse", "--short=10", "HEAD^{tree}").stdout.strip()
    return True, "", tree


def _parse(text: str) -> Recipe:
    base, *steps = [part.strip() for part in text.split("+")]
    return Recipe(base, tuple(steps))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clone", required=True, type=Path, help="a writable clone of git.git")
    ap.add_argument("--worktree", type=Path, help="scratch worktree path (made and removed)")
    ap.add_argument("--recipe", action="append", default=[],
                    help='try "BASE + STEP + ..." instead of the scenarios\' recipes')
    args = ap.parse_args(argv)

    if args.recipe:
        uses: dict[Recipe, list[str]] = {_parse(t): ["--recipe"] for t in args.recipe}
    else:
        from lab.scenarios import SCENARIOS
        uses = {}
        for s in SCENARIOS.values():
            for title, cr in s.c_recipes.items():
                for side, recipe in (("before", cr.before), ("after", cr.after)):
                    uses.setdefault(recipe, []).append(f"{s.name} | {title} | {side}")

    wt = args.worktree or Path(tempfile.mkdtemp(prefix="c-recipes-", dir=args.clone.parent))
    if wt.exists() and not any(wt.iterdir()):
        wt.rmdir()
    r = subprocess.run(["git", "-C", str(args.clone), "worktree", "add", "-q", "--detach",
                        str(wt)], capture_output=True, text=True, check=False)
    if r.returncode:
        print(r.stderr, file=sys.stderr)
        return 2
    failed = 0
    try:
        for i, (recipe, where) in enumerate(uses.items(), 1):
            ok, why, tree = apply(wt, recipe)
            failed += not ok
            status = f"OK   tree {tree}" if ok else f"FAIL {why}"
            print(f"[{i}/{len(uses)}] {status}: {recipe.text()}")
            for w in where:
                print(f"        used by {w}")
            sys.stdout.flush()
    finally:
        _clean(wt)
        subprocess.run(["git", "-C", str(args.clone), "worktree", "remove", "--force",
                        str(wt)], capture_output=True, check=False)
    print(f"{len(uses) - failed} of {len(uses)} recipes apply cleanly"
          + (f"; {failed} do not" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
