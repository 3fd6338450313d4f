"""Recipes made real (lab.c_recipes' data): their trees, their builds, and a bisection.

Contract: apply(src, recipe) makes the recipe's tree in a detached linked worktree of
the clone src (<cache>/recipe-worktrees/<hash of src's path>/, one per clone, reused,
one recipe at a time under a lock; src's own work tree, index and HEAD are never
touched): the worktree is reset to the base commit, then each step runs as git runs
it (cherry-pick REV or A..B, revert --no-edit REV or A..B) in gitbin's hermetic
environment (a fixed author, committer and dates), so one recipe gives one commit id
on every run; the resulting commit is returned. A recipe without steps is its base
commit. A step that does not apply cleanly (a conflict, an empty pick, an unknown
revision) is a RecipeError of one line naming the step and the recipe; the
cherry-pick or revert is aborted and the worktree left clean at the base.

build_recipe(src, recipe) is the build of that commit (lab.builds.build, by_tree:
cached by the tree id, so two recipes that make one tree share one build).

bisect(src, good, bad, count) finds the first commit between good and bad whose
count(build) differs from good's by more than threshold (relative): the commits to
test are chosen as `git bisect` chooses them, over the whole graph (merges and side
branches included), by `git rev-list --bisect-vars BAD ^GOOD...` after each verdict;
each tested commit is built by lab.builds.build (cached builds reused) and counted
once. good must be an ancestor of bad, and bad's count must differ from good's.
"""
from __future__ import annotations

import fcntl
import hashlib
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TextIO

from gitbin import cache_root, find_git, hermetic_env

from .builds import BuildError, GitBuild, build, resolve
from .c_recipes import Recipe


class RecipeError(RuntimeError):
    """A recipe could not be made; the message is one line."""


def worktrees_root() -> Path:
    return cache_root() / "recipe-worktrees"


def _run(cwd: Path, args: Sequence[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([find_git(), "-C", str(cwd), *args], capture_output=True,
                          text=True, env=hermetic_env())


def _last_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [x.strip() for x in (proc.stderr + proc.stdout).splitlines() if x.strip()]
    return lines[-1] if lines else f"exit {proc.returncode}"


@contextmanager
def _worktree(src: Path, commit: str) -> Iterator[Path]:
    """src's private detached worktree, reset to commit, held under its lock."""
    key = hashlib.sha256(str(src).encode()).hexdigest()[:16]
    tree = worktrees_root() / key
    worktrees_root().mkdir(parents=True, exist_ok=True)
    with open(worktrees_root() / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (tree / ".git").is_file() or _run(tree, ["rev-parse", "HEAD"]).returncode:
            shutil.rmtree(tree, ignore_errors=True)
            _run(src, ["worktree", "prune"])
            proc = _run(src, ["worktree", "add", "-q", "--detach", "--force", str(tree),
                              commit])
            if proc.returncode != 0:
                raise RecipeError(f"git worktree add {tree} in {src}: {_last_line(proc)}")
        _clean(tree, commit)
        yield tree


def _clean(tree: Path, commit: str) -> None:
    """The worktree at commit, no operation under way, no stray file."""
    for op in ("cherry-pick", "revert"):
        _run(tree, [op, "--abort"])                 # fails when none is under way
    for args in (["checkout", "-q", "--detach", "-f", commit], ["reset", "-q", "--hard"],
                 ["clean", "-q", "-fdx"]):
        proc = _run(tree, args)
        if proc.returncode != 0:
            raise RecipeError(f"resetting {tree}: git {' '.join(args)}: {_last_line(proc)}")


def _step_argv(step: str) -> tuple[list[str], list[str]]:
    """(git's arguments for the step, the revisions it names)."""
    kind, _, rev = step.partition(" ")
    rev = rev.strip()
    ends = [r for r in rev.split("..") if r] if ".." in rev else [rev]
    opts = ["--no-edit"] if kind == "revert" else []
    return [kind, *opts, rev], ends


def apply(src: Path | str, recipe: Recipe) -> str:
    """The commit of the recipe's tree (see the module doc)."""
    src = Path(src).resolve()
    try:
        base = resolve(src, recipe.base, ("--git-src", f"recipe {recipe.text()}: base"))
    except BuildError as e:
        raise RecipeError(str(e)) from None
    if not recipe.steps:
        return base
    with _worktree(src, base) as tree:
        for step in recipe.steps:
            argv, revs = _step_argv(step)
            for rev in revs:
                if _run(tree, ["rev-parse", "--verify", "--quiet", "--end-of-options",
                               f"{rev}^{{commit}}"]).returncode != 0:
                    _clean(tree, base)
                    raise RecipeError(f"recipe {recipe.text()}: step '{step}': unknown "
                                      f"revision {rev} in {src}")
            proc = _run(tree, argv)
            if proc.returncode != 0:
                _clean(tree, base)
                raise RecipeError(f"recipe {recipe.text()}: step '{step}' does not apply "
                                  f"cleanly ({_last_line(proc)}); aborted")
        head = _run(tree, ["rev-parse", "HEAD"]).stdout.strip()
        _clean(tree, base)
    return head


def build_recipe(src: Path | str, recipe: Recipe, jobs: int | None = None,
                 log: TextIO | None = sys.stderr, provisioned_base: bool = True) -> GitBuild:
    """The build of the recipe's tree, cached by its tree id (made now, or reused);
    its rev is the recipe's text, its commit apply()'s."""
    commit = apply(src, recipe)
    b = build(src, commit, jobs, log, by_tree=True, provisioned_base=provisioned_base)
    return replace(b, rev=recipe.text())


@dataclass
class BisectResult:
    culprit: str                           # the first commit whose count differs
    subject: str                           # its subject line
    tested: list[tuple[str, int]] = field(default_factory=list)   # (commit, count), in order
    builds: int = 0                        # distinct builds used
    seconds: float = 0.0                   # wall time of the bisection


def _bisect_vars(src: Path, bad: str, goods: Sequence[str]) -> dict[str, str]:
    proc = _run(src, ["rev-list", "--bisect-vars", bad, *[f"^{g}" for g in goods]])
    if proc.returncode != 0:
        raise RecipeError(f"git rev-list --bisect-vars in {src}: {_last_line(proc)}")
    out = {}
    for line in proc.stdout.splitlines():
        name, _, value = line.partition("=")
        out[name] = value.strip("'")
    return out


def bisect(src: Path | str, good: str, bad: str, count: Callable[[GitBuild], int],
           threshold: float = 0.05, log: TextIO | None = None, jobs: int | None = None,
           provisioned_base: bool = True) -> BisectResult:
    """The first commit from good to bad whose count differs from good's by more than
    threshold (see the module doc); each tested commit's count printed to log."""
    started = time.time()
    src = Path(src).resolve()
    good_c = resolve(src, good, ("--git-src", "--good"))
    bad_c = resolve(src, bad, ("--git-src", "--bad"))
    if _run(src, ["merge-base", "--is-ancestor", good_c, bad_c]).returncode != 0:
        raise RecipeError(f"--good {good} is not an ancestor of --bad {bad} in {src}")
    builds: dict[str, GitBuild] = {}
    counts: dict[str, int] = {}

    def measure(commit: str) -> int:
        if commit not in counts:
            if commit not in builds:
                builds[commit] = build(src, commit, jobs, log,
                                       provisioned_base=provisioned_base)
            counts[commit] = count(builds[commit])
            if log:
                print(f"reftable-lab bisect: {commit[:10]} {counts[commit]}", file=log)
        return counts[commit]

    reference = measure(good_c)

    def differs(commit: str) -> bool:
        return abs(measure(commit) - reference) > threshold * abs(reference)

    if not differs(bad_c):
        raise RecipeError(f"--bad {bad}: its count {counts[bad_c]} is within {threshold:g} "
                          f"of --good {good}'s {reference}: nothing to bisect")
    goods = [good_c]
    while True:
        found = _bisect_vars(src, bad_c, goods)
        if int(found.get("bisect_all", "0")) <= 1:
            break                                   # bad is the only candidate left
        rev = found["bisect_rev"]
        if differs(rev):
            bad_c = rev
        else:
            goods.append(rev)
    subject = _run(src, ["log", "-1", "--format=%s", bad_c]).stdout.strip()
    return BisectResult(bad_c, subject, list(counts.items()), len(builds),
                        round(time.time() - started, 1))
