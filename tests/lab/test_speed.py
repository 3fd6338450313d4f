"""lab.speed: whole commands of the lab beside git's, counted, timed and compared."""
from __future__ import annotations

import pytest

from lab import speed
from lab.gitbin import REPO_ROOT, GitRunner
from lab.measure.instructions import available


def _repo(git: GitRunner, make_repo) -> str:
    repo = make_repo(ref_format="reftable")
    git.run(["commit", "-q", "--allow-empty", "-m", "one"], cwd=repo)
    for i in range(30):
        git.run(["branch", f"b{i:02d}"], cwd=repo)
    return str(repo / ".git")


def test_rows_compare_output_and_ratio(git: GitRunner, make_repo) -> None:
    gitdir = _repo(git, make_repo)
    here = speed.Variant("this checkout", (str(REPO_ROOT / "core"), str(REPO_ROOT)))
    rows = [speed.Row(speed.Workload("show-ref b07", gitdir, ("show-ref", "b07"),
                                     ("--git-dir", gitdir, "show-ref", "b07"))),
            # the lab asked for another ref than git: its output differs, and says so
            speed.Row(speed.Workload("show-ref, other ref", gitdir, ("show-ref", "b07"),
                                     ("--git-dir", gitdir, "show-ref", "b08")))]
    speed.measure(rows, [here], repeat=2, jobs=1, count=False, log=lambda s: None)
    assert rows[0].git.status == 0 and rows[0].lab["this checkout"].same_output is True
    assert rows[1].lab["this checkout"].same_output is False
    assert rows[0].lab["this checkout"].cpu > 0
    text = speed.table(rows, [here], None)
    assert text.count("\n| show-ref") == 2 and "**output differs**" in text
    assert text.splitlines()[0] == "| workload | git | this checkout |"


@pytest.mark.skipif(not available(), reason="valgrind (and gcc for detrand) needed")
def test_counts_repeat_to_the_instruction(git: GitRunner, make_repo) -> None:
    gitdir = _repo(git, make_repo)
    here = speed.Variant("this checkout", (str(REPO_ROOT / "core"), str(REPO_ROOT)))
    w = speed.Workload("show-ref", gitdir, ("show-ref", "b07"),
                       ("--git-dir", gitdir, "show-ref", "b07"))
    counts = []
    for _ in range(2):
        rows = [speed.Row(w)]
        speed.measure(rows, [here], repeat=1, jobs=2, count=True, log=lambda s: None)
        counts.append((rows[0].git.instructions, rows[0].lab["this checkout"].instructions))
    assert counts[0] == counts[1]
    assert counts[0][1] > counts[0][0] > 0        # the lab's Python start-up alone is more
    text = speed.table(rows, [here], 1)
    assert "x**)" in text
