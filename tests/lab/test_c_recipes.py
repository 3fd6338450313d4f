"""Real C beside every seed row (lab.c_recipes): every row with a published figure has
exactly one of a CRecipe (the git.git trees before and after) or a no_c reason; every key
names a row the scenario has at every scale; every recipe is well formed. Needs no
git.git: scripts/verify_c_recipes.py applies the recipes in a clone."""
from __future__ import annotations

import re
from itertools import pairwise

import pytest

from lab.c_recipes import CRecipe, Recipe
from lab.scenarios import SCENARIOS

SCALES = ("small", "full")
REV = re.compile(r"^[0-9a-f]{10,40}(~\d+)?$|^v\d+\.\d+\.\d+(-rc\d+)?(~\d+)?$")


def _titles(name: str, scale: str) -> set[str]:
    return {title for title, _, _ in SCENARIOS[name].comparisons(scale)}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_every_published_row_has_c_or_a_reason(name: str) -> None:
    s = SCENARIOS[name]
    both = set(s.c_recipes) & set(s.no_c)
    assert not both, f"{name}: rows both in c_recipes and no_c: {sorted(both)}"
    missing = [t for t in s.row_published if t not in s.c_recipes and t not in s.no_c]
    assert not missing, f"{name}: published rows with neither a C recipe nor a reason: {missing}"


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_keys_name_rows_at_every_scale(name: str, scale: str) -> None:
    """The keys are titles as comparisons() gives them; a title that named a scale
    parameter would match one scale only, so every scale is checked."""
    s, titles = SCENARIOS[name], _titles(name, scale)
    unknown = [t for t in (*s.c_recipes, *s.no_c) if t not in titles]
    assert not unknown, f"{name} ({scale}): keys that are no row: {unknown}"


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_recipes_are_well_formed(name: str) -> None:
    s = SCENARIOS[name]
    for title, c in s.c_recipes.items():
        assert isinstance(c, CRecipe), (name, title)
        assert c.before != c.after, f"{name}: {title}: before and after are the same recipe"
        assert c.note.strip(), f"{name}: {title}: a recipe says why these trees"
        for recipe in (c.before, c.after):
            assert isinstance(recipe, Recipe)
            # Recipe validates its steps itself: rebuilding it re-runs that check
            Recipe(recipe.base, recipe.steps)
            assert REV.match(recipe.base), f"{name}: {title}: base {recipe.base!r}"
            for step in recipe.steps:
                for rev in step.split(" ", 1)[1].split(".."):
                    assert REV.match(rev), f"{name}: {title}: {step!r}: commit ids of 10+ hex"
    for title, why in s.no_c.items():
        assert why.strip(), f"{name}: {title}: no_c needs a reason"


def test_a_series_chains_its_step_trees() -> None:
    """A cumulative row's step trees chain: each "+X on top of" row starts where the
    previous row ended (seed 000's cherry-picks, seed 004's reverts). Over one table the
    lab leaves pq_cmp out of the sequence while C keeps 4/7 in git's order, so there the
    chain has that one gap by design; the three-table sequence is the whole series."""
    for name in ("show-ref-3tables", "update-ref-create-100"):
        s = SCENARIOS[name]
        rows = [(t, s.c_recipes[t]) for t, _, _ in s.comparisons("full")
                if t in s.c_recipes and (t.startswith("+") or t.endswith("alone, others off"))]
        assert len(rows) >= 2, name
        for (_, a), (t, b) in pairwise(rows):
            assert a.after == b.before, f"{name}: {t} does not start where the row before ended"
        whole = next(c for t, c in s.c_recipes.items() if t.startswith("the whole sequence"))
        assert whole.after == rows[-1][1].after, name


def test_bad_steps_are_refused() -> None:
    for bad in ("merge abc", "cherry-pick", "revert a b", "pick 1234567890"):
        with pytest.raises(ValueError):
            Recipe("v2.45.0", (bad,))


def test_seed_001_getdelim_trees_carry_the_errno_fix() -> None:
    """0cc30e0e84's getdelim reader dies "Out of memory, getdelim failed" at the end of
    a file whenever errno was left at ENOMEM by an earlier call (its check reads a stale
    errno); git's fix 642956cf45 (2017, errno = 0 before getdelim) is picked on top of
    every seed-001 tree that has getdelim, and on no tree without it (it does not apply
    there: no getdelim call to fix)."""
    recipes = SCENARIOS["packed-verify-missing"].c_recipes
    fix = "cherry-pick 642956cf45"
    getdelim = recipes["packed_reader: getc_unlocked -> getdelim (packed_lookup=parse_all)"]
    series = recipes["the v2 series (all-off -> packed_reader=getdelim, "
                     "packed_lookup=parse_all)"]
    assert getdelim.after == Recipe("0cc30e0e84", (fix,))
    assert series.after == Recipe("a337292675", (fix,))
    for c in recipes.values():
        assert fix not in c.before.steps
