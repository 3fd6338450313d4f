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
