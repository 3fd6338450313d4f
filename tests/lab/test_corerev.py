"""Two revisions of reftable-core side by side (bench --core-rev A --core-rev B).

A temporary clone of this repository gets a second commit that doubles the
spin workload's loop: measured by allocations (exact), the variant at the
second revision makes twice the first's, which shows each worker ran its own
revision's code (a git worktree of it under the cache, on PYTHONPATH).
"""
from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest

from lab.builds import core_rev
from lab.cli import main
from gitbin import REPO_ROOT, hermetic_env
from lab.harness import expand, run_scenario
from lab.results import Revisions
from lab.scenarios import SCENARIOS, DatasetRef, Scenario

LOOP = "        for i in range(n):\n            total += i\n"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], env=hermetic_env(), check=True,
                          capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("corerev") / "lab"
    _git(REPO_ROOT.parent, "clone", "-q", "--no-checkout", str(REPO_ROOT), str(repo))
    _git(repo, "checkout", "-q", "--detach", _git(REPO_ROOT, "rev-parse", "HEAD"))
    workloads = repo / "lab" / "workloads.py"
    text = workloads.read_text()
    assert text.count(LOOP) == 1
    workloads.write_text(text.replace(LOOP, LOOP.replace("range(n)", "range(2 * n)")))
    _git(repo, "commit", "-q", "-a", "-m", "spin: twice the loop")
    return repo


def _spin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Scenario:
    monkeypatch.setattr(Scenario, "dataset",
                        lambda self, scale, datasets_dir=None: DatasetRef(tmp_path, tmp_path))
    return dataclasses.replace(SCENARIOS["show-ref-1table"], name="corerev-selftest",
                               workload="spin", scale_params={"small": {"n": 3000}},
                               peer_workloads=(("git", "git_show_ref"),))


def test_each_variant_runs_at_each_revision(clone: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = core_rev(clone, "HEAD~"), core_rev(clone, "HEAD")
    assert a.commit == _git(clone, "rev-parse", "HEAD~") and b.dir != a.dir
    assert _git(b.dir, "rev-parse", "HEAD") == b.commit
    assert core_rev(clone, "HEAD") == b            # reused
    s = _spin(tmp_path, monkeypatch)
    variants, envs, rows = expand(s, "small", Revisions(core=(a, b)))
    labels = [v.label for _, v in variants]
    assert labels[:4] == [f"all-on@{a.short}", f"all-on@{b.short}", f"all-off@{a.short}",
                          f"all-off@{b.short}"] and labels[-1] == "git"
    assert envs[f"all-on@{b.short}"]["PYTHONPATH"].split(":") == [str(b.dir / "core"),
                                                                  str(b.dir)]
    assert rows[0] == ("all-on: HEAD~ -> HEAD", f"all-on@{a.short}", f"all-on@{b.short}")
    assert ("git over reftable-lab (all-on at HEAD)", f"all-on@{b.short}", "git") in rows
    r = run_scenario(s, "small", tmp_path / "out", only=["all-on"], progress=False,
                     measures="allocations", revisions=Revisions(core=(a, b)), jobs=2)
    by = {v.label: v for v in r.variants}
    assert list(by) == [f"all-on@{a.short}", f"all-on@{b.short}"]
    first, second = by[f"all-on@{a.short}"].allocations, by[f"all-on@{b.short}"].allocations
    assert first and second and 1.9 < second / first < 2.1
    (q,) = r.ratios
    assert q["title"] == "all-on: HEAD~ -> HEAD" and q["ratio"] == pytest.approx(first / second)


def test_a_bad_core_revision_is_one_line(clone: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "show-ref-1table", "--core-src", str(clone), "--core-rev", "nope",
                 "--measure", "time"]) == 2
    assert capsys.readouterr().err == \
        f"reftable-lab bench: --core-rev nope: unknown revision in {clone}\n"
    assert main(["bench", "show-ref-1table", "--core-rev", "HEAD", "--rounds", "2",
                 "--within-process", "--measure", "time", "--only", "all-on",
                 "--core-src", str(clone), "--datasets", str(clone.parent / "ds")]) == 1
    assert "--within-process" in capsys.readouterr().err
