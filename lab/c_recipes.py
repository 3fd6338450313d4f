"""How to make real git's C "before" and "after" trees of a seed row: data, not code.

Contract: a Recipe names a tree of git.git: `base` (a commit-ish of a local clone:
a tag, a commit id, "X~1") and `steps`, applied in order on a detached worktree of
that clone, each one of

  "cherry-pick REV"       git cherry-pick REV (REV's change on top)
  "cherry-pick A..B"      git cherry-pick A..B (the commits of the range, oldest first)
  "revert REV"            git revert --no-edit REV
  "revert A..B"           git revert --no-edit A..B (the range, newest first, as git does)

A step that does not apply cleanly is an error naming it (lab.recipes), never a skip.
A CRecipe is one row's pair: the tree just before the row's patch and the tree with
it, built and measured on the row's own git workload; `note` says why these trees
(e.g. "cherry-picked onto v2.45.0: the series predates --ref-format=reftable").
Scenario.c_recipes maps a row's title (as Scenario.comparisons gives it) to its
CRecipe; Scenario.no_c maps a row's title to why it has no C figure.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

STEP_KINDS = ("cherry-pick", "revert")


@dataclass(frozen=True)
class Recipe:
    base: str
    steps: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for step in self.steps:
            kind, _, rev = step.partition(" ")
            if kind not in STEP_KINDS or not rev.strip() or " " in rev.strip():
                raise ValueError(f"bad recipe step {step!r}: expected "
                                 f"'cherry-pick REV', 'revert REV' or a range A..B")

    def text(self) -> str:
        """One line: 'v2.45.0 + cherry-pick X + revert Y'."""
        return " + ".join((self.base, *self.steps))


@dataclass(frozen=True)
class CRecipe:
    before: Recipe
    after: Recipe
    note: str = ""


# -- building recipes, and the seed-004 trees (used by lab.scenarios) -------------------
OLD_BUILD = ("built here (2026-12-03, gcc 12, the lab's MAKE_OPTS: NO_OPENSSL=1, so "
             "block-sha1 and none of the OpenSSL API that 1.1/3 changed; NO_CURL, NO_EXPAT, "
             "NO_GETTEXT): 90-240 s a tree from a newer build's folder, whose submodule "
             "folders lab.builds removes")


def commit_and_parent(rev: str, note: str) -> CRecipe:
    """A commit of git.git that builds and runs the row's workload, and its parent."""
    return CRecipe(Recipe(f"{rev}~1"), Recipe(rev), note)


def picks(base: str, commits: Iterable[str]) -> Recipe:
    """base with each commit cherry-picked on top, in order (a series' step tree)."""
    return Recipe(base, tuple(f"cherry-pick {c}" for c in commits))


def reverts(base: str, commits: Iterable[str]) -> Recipe:
    """base with each commit reverted, in the order given (newest first)."""
    return Recipe(base, tuple(f"revert {c}" for c in commits))


SEED_004_BASE = "b4385bf016"
SEED_004_TREES = {
    "neither": reverts(SEED_004_BASE, ("4f36b8597c", "718a93ecc0", "6fdfaf15a0")),
    "stat_cache": reverts(SEED_004_BASE, ("4f36b8597c", "718a93ecc0")),
    "both": reverts(SEED_004_BASE, ("4f36b8597c",)),
}
SEED_004_NOTE = (f"reverted on {SEED_004_BASE} (v2.44.0 + the reftable backend): seed 004 "
                  "landed in 2.44, before the backend; 4f36b8597c (the later stat-cache "
                  "rewrite) reverted in every tree")
SEED_004_C = {
    "stat_cache alone, others off": CRecipe(
        SEED_004_TREES["neither"], SEED_004_TREES["stat_cache"],
        f"seed 004 3/4 6fdfaf15a0, no mmap on either side; {SEED_004_NOTE}"),
    "+mmap on top of only-stat_cache": CRecipe(
        SEED_004_TREES["stat_cache"], SEED_004_TREES["both"],
        f"seed 004 4/4 718a93ecc0 on top of 3/4; {SEED_004_NOTE}"),
    "the whole sequence (stat_cache then mmap)": CRecipe(
        SEED_004_TREES["neither"], SEED_004_TREES["both"],
        f"seed 004 3/4 + 4/4 (the steps' trees); {SEED_004_NOTE}"),
}
