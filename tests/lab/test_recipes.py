"""lab.recipes: a recipe's tree in a private worktree of a real clone, and its build
cached by tree (the tiny C project of tests.helpers.cproject, built by lab.builds).

History: c0; branch feature from c0: f1 (adds a.txt), f2 (adds b.txt); main: m1 (a
note), m2 (adds another a.txt: f1 conflicts with it)."""
from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pytest

from lab.builds import builds_root
from lab.c_recipes import Recipe
from lab.recipes import RecipeError, apply, build_recipe, worktrees_root
from tests.helpers.cproject import Repo, project


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    monkeypatch.setenv("REFTABLE_LAB_CACHE", str(tmp_path / "cache"))
    repo = project(tmp_path / "src")
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("f1: a", {"a.txt": "f1\n"})
    repo.commit("f2: b", {"b.txt": "f2\n"})
    repo.git("checkout", "-q", "main")
    repo.append("m1: a note", "main.txt", "m1")
    repo.commit("m2: another a", {"a.txt": "other\n"})
    return repo


def _show(repo: Repo, commit: str, name: str) -> str:
    return repo.git("show", f"{commit}:{name}")


def _files(repo: Repo, commit: str) -> set[str]:
    return set(repo.git("ls-tree", "--name-only", commit).split())


def _untouched(repo: Repo, head: str) -> None:
    """src's HEAD, branch, index and work tree as they were."""
    assert repo.rev("HEAD") == head
    assert repo.git("symbolic-ref", "HEAD") == "refs/heads/main"
    assert repo.git("status", "--porcelain") == ""


def test_cherry_pick_and_revert_make_the_expected_trees(repo: Repo) -> None:
    head = repo.rev("HEAD")
    c0, f1, f2, m1 = (repo.rev(r) for r in ("main~2", "feature~1", "feature", "main~1"))
    picked = Recipe(m1, (f"cherry-pick {c0}..{f2}",))
    commit = apply(repo.path, picked)
    assert (_show(repo, commit, "a.txt"), _show(repo, commit, "b.txt"),
            _show(repo, commit, "main.txt")) == ("f1", "f2", "m1")
    assert repo.git("log", "--format=%s", f"{m1}..{commit}").splitlines() == ["f2: b", "f1: a"]
    assert apply(repo.path, picked) == commit            # pinned identity and dates
    reverted = apply(repo.path, Recipe("feature", (f"revert {f1}",)))
    assert _files(repo, reverted) == _files(repo, c0) | {"b.txt"}
    assert repo.git("log", "-1", "--format=%s", reverted) == 'Revert "f1: a"'
    assert apply(repo.path, Recipe("feature~1")) == f1    # no steps: the base
    _untouched(repo, head)


def test_a_conflict_is_one_line_and_leaves_nothing_behind(repo: Repo) -> None:
    head = repo.rev("HEAD")
    f1 = repo.rev("feature~1")
    recipe = Recipe("main", ("revert main~1", f"cherry-pick {f1}"))
    with pytest.raises(RecipeError) as e:
        apply(repo.path, recipe)
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith(f"recipe main + revert main~1 + cherry-pick {f1}: step "
                          f"'cherry-pick {f1}' does not apply cleanly")
    (tree,) = [p for p in worktrees_root().iterdir() if p.is_dir()]
    state = subprocess.run(["git", "-C", str(tree), "status", "--porcelain"],
                           capture_output=True, text=True, check=True).stdout
    assert state == ""
    assert not (Path(repo.git("-C", str(tree), "rev-parse", "--git-dir")) /
                "CHERRY_PICK_HEAD").exists()
    assert repo.git("-C", str(tree), "rev-parse", "HEAD") == head      # back at the base
    with pytest.raises(RecipeError, match=r"step 'revert no-such': unknown revision no-such"):
        apply(repo.path, Recipe("main", ("revert no-such",)))
    with pytest.raises(RecipeError, match="^recipe nope: base nope: unknown revision in "):
        apply(repo.path, Recipe("nope"))
    _untouched(repo, head)


def test_the_build_is_cached_by_tree(repo: Repo) -> None:
    f2 = repo.rev("feature")
    first_log, second_log = io.StringIO(), io.StringIO()
    a = build_recipe(repo.path, Recipe("feature"), jobs=1, log=first_log,
                     provisioned_base=False)
    b = build_recipe(repo.path, Recipe("feature~1", ("cherry-pick feature",)), jobs=1,
                     log=second_log, provisioned_base=False)
    assert a.commit == f2 and b.commit != f2           # a new commit (pinned date) ...
    assert repo.rev(f"{b.commit}^{{tree}}") == repo.rev(f"{f2}^{{tree}}")   # ... of one tree
    assert a.dir == b.dir == builds_root() / f"tree-{repo.rev(f'{f2}^{{tree}}')}"
    assert [p.name for p in builds_root().iterdir()] == [a.dir.name]
    assert "building" in first_log.getvalue() and second_log.getvalue() == ""
    info = b.info()
    assert info["commit"] == f2 and info["rev"] == f2  # made once, for the first recipe
    assert info["base"] is None and sorted(info["compiled"]) == ["main.o", "work.o"]
    assert b.rev == "feature~1 + cherry-pick feature"
    out = subprocess.run([str(b.git), "7"], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("c0 ")
