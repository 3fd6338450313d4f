"""The compiled cores (lab.builds.compiled_core, cython_core; bench --core interpreted,compiled).

The builds' rows are checked without a build (expand); the build itself is made once
(cached by the sources' hash: reused by every later run, and by make test-compiled) and
must load its extension modules out of tree, leave the listed modules interpreted and
give the same refs and the same work counters as the interpreted core.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lab.builds import BuildError, CoreBuild, compiled_core, core_build, cython_core
from gitbin import REPO_ROOT
from lab.harness import expand
from lab.results import Revisions, build_title, row_published
from lab.scenarios import SCENARIOS

INTERPRETED = {"reftable_core/errors.py", "reftable_core/counters.py",
               "reftable_core/refs/api.py", "reftable_core/reftable/blocksource.py"}

# a reftable store read by the ref store: the refs, which modules ran, the work counters
PROBE = """
import json, sys
from reftable_core import counters
from reftable_core.refs.reftable_backend import ReftableRefStore
from reftable_core.reftable import loops, record
counters.reset()
store = ReftableRefStore(sys.argv[1])
refs = [(r.name.decode(), (r.value or b"").hex()) for r in store.iter_refs()]
print(json.dumps({"refs": refs, "loops": loops.__file__, "record": record.__file__,
                  "counters": counters.snapshot()}))
"""


def test_each_flag_row_is_shown_under_each_build() -> None:
    s = SCENARIOS["show-ref-1table"]
    builds = (CoreBuild("interpreted"), CoreBuild("compiled", Path("/cache/compiled-core/k")))
    variants, envs, rows = expand(s, "small", Revisions(core=builds))
    labels = [v.label for _, v in variants]
    assert labels[:4] == ["all-on@interpreted", "all-on@compiled", "all-off@interpreted",
                          "all-off@compiled"]
    assert envs["all-on@compiled"]["PYTHONPATH"].split(os.pathsep) == [
        "/cache/compiled-core/k", str(REPO_ROOT / "core"), str(REPO_ROOT)]
    assert envs["all-on@interpreted"]["PYTHONPATH"].split(os.pathsep) == [
        str(REPO_ROOT / "core"), str(REPO_ROOT)]
    for b in ("interpreted", "compiled"):
        for title, slow, fast in s.comparisons("small"):
            assert (build_title(title, b), f"{slow}@{b}", f"{fast}@{b}") in rows
    assert ("all-on: interpreted -> compiled", "all-on@interpreted", "all-on@compiled") in rows
    published = row_published(s.row_published, Revisions(core=builds).to_json())
    assert s.row_published and all(published[build_title(t, "compiled")] == p
                                   for t, p in s.row_published.items())
    assert Revisions(core=builds).to_json()["core"][1] == {
        "suffix": "@compiled", "rev": "compiled", "commit": "k", "kind": "build"}


def test_an_unknown_build_is_one_line() -> None:
    with pytest.raises(BuildError, match=r"^--core native: not one of interpreted, compiled, cython$"):
        core_build("native")


def _probe(path: list[str], gitdir: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path), "PYTHONSAFEPATH": "1"}
    out = subprocess.run([sys.executable, "-c", PROBE, str(gitdir)], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


@pytest.mark.git
def test_the_compiled_core_reads_what_the_interpreted_one_does(make_repo, git) -> None:
    folder = compiled_core()
    assert compiled_core() == folder                                   # reused
    info = json.loads((folder / "lab-build.json").read_text())
    assert set(info["interpreted"]) == INTERPRETED
    assert "reftable_core/reftable/loops" in " ".join(info["extensions"])
    assert not list((REPO_ROOT / "core").rglob("*.so"))               # out of tree
    repo = make_repo("r")
    git.run(["commit", "-q", "--allow-empty", "-m", "x"], cwd=repo)
    for i in range(300):
        git.run(["update-ref", f"refs/tags/t{i:03}", "HEAD"], cwd=repo)
    git.run(["pack-refs", "--all"], cwd=repo)                          # main + 300 tags
    core = [str(REPO_ROOT / "core"), str(REPO_ROOT)]
    interpreted = _probe(core, repo / ".git")
    compiled = _probe([str(folder), *core], repo / ".git")
    assert interpreted["loops"].endswith(".py") and compiled["loops"].endswith(".so")
    assert compiled["record"].startswith(str(folder))
    assert len(compiled["refs"]) == 301 and compiled["refs"] == interpreted["refs"]
    assert compiled["counters"] == interpreted["counters"]
    assert compiled["counters"]["blocks_read"] > 0


@pytest.mark.git
def test_the_cython_core_reads_what_the_interpreted_one_does(make_repo, git) -> None:
    """The Cython build (lab.builds.cython_core): every module an extension, the .pxd
    files beside them, the same refs and work counters as the interpreted core."""
    folder = cython_core()
    assert cython_core() == folder                                     # reused
    info = json.loads((folder / "lab-build.json").read_text())
    assert info["interpreted"] == {}
    assert len(info["extensions"]) == len(list((REPO_ROOT / "core").rglob("*.py")))
    assert not list((REPO_ROOT / "core").rglob("*.so"))               # out of tree
    assert not list((REPO_ROOT / "core").rglob("*.c"))
    assert core_build("cython") == CoreBuild("cython", folder)
    repo = make_repo("r")
    git.run(["commit", "-q", "--allow-empty", "-m", "x"], cwd=repo)
    for i in range(300):
        git.run(["update-ref", f"refs/tags/t{i:03}", "HEAD"], cwd=repo)
    git.run(["pack-refs", "--all"], cwd=repo)
    core = [str(REPO_ROOT / "core"), str(REPO_ROOT)]
    interpreted = _probe(core, repo / ".git")
    built = _probe([str(folder), *core], repo / ".git")
    assert built["loops"].endswith(".so") and built["record"].startswith(str(folder))
    assert len(built["refs"]) == 301 and built["refs"] == interpreted["refs"]
    assert built["counters"] == interpreted["counters"]
