"""lab.recipes.bisect on the tiny C project (tests.helpers.cproject): 30 commits, the one
that doubles the hot loop on a merged side branch, each tested commit built by
lab.builds and counted exactly under callgrind (lab.measure.instructions)."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from gitbin import find_git
from lab.builds import GitBuild
from lab.cli import main
from lab.measure.instructions import available, count_env, count_process
from lab.recipes import RecipeError, bisect
from tests.helpers.cproject import planted_history, wrapper_history

pytestmark = pytest.mark.skipif(not available(), reason="needs valgrind and detrand")

LOOP = "20000"     # the hot loop's length at FACTOR 1


def count(build: GitBuild) -> int:
    """The built program's instructions, its whole process, under callgrind."""
    return count_process([str(build.git), LOOP], count_env(), stdin=b"", check=True)


def test_bisect_finds_the_planted_commit(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REFTABLE_LAB_CACHE", str(tmp_path / "cache"))
    repo, planted = planted_history(tmp_path / "src")
    first_parents = repo.git("rev-list", "--first-parent", "main").split()
    assert planted not in first_parents               # only the merge brings it in
    log = io.StringIO()
    found = bisect(repo.path, "main~19", "main", count, log=log, jobs=1,
                   provisioned_base=False)
    assert found.culprit == planted
    assert found.subject == "s6: the hot loop twice over"
    tested = dict(found.tested)
    assert len(tested) == len(found.tested) == found.builds   # each commit built once
    assert found.builds <= 8                          # log2(29) steps, good and bad
    good = tested[repo.rev("main~19")]
    assert tested[planted] > 1.5 * good
    # nothing after it changes the loop (a longer banner prints a few more instructions)
    assert abs(tested[repo.rev("main")] - tested[planted]) < 0.001 * tested[planted]
    for commit, n in found.tested:
        assert f"{commit[:10]} {n}" in log.getvalue()
    assert found.seconds > 0

    # the same build counted again: the same count, to the instruction
    again = bisect(repo.path, "main~19", "main", count, jobs=1, provisioned_base=False)
    assert again.tested == found.tested and again.culprit == planted


def test_nothing_to_bisect_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REFTABLE_LAB_CACHE", str(tmp_path / "cache"))
    repo, planted = planted_history(tmp_path / "src")
    with pytest.raises(RecipeError, match=r"^--bad main~14: its count \d+ is within 0.05 of "
                                          r"--good main~15's \d+: nothing to bisect$"):
        bisect(repo.path, "main~15", "main~14", count, provisioned_base=False)
    with pytest.raises(RecipeError, match="^--good main is not an ancestor of --bad main~1 "):
        bisect(repo.path, "main", "main~1", count, provisioned_base=False)


def test_the_command_counts_the_scenarios_git_peer(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """`reftable-lab bisect` over a ./git that runs a hot loop before the real git: the
    count is the harness's exact count of update-ref-create-1's git peer with each
    build, and the commit that lengthens the loop is found."""
    monkeypatch.setenv("REFTABLE_LAB_CACHE", str(tmp_path / "cache"))
    repo, planted = wrapper_history(tmp_path / "src", find_git())
    argv = ["bisect", "update-ref-create-1", "--git-src", str(repo.path), "--good", "main~4",
            "--bad", "main", "--out", str(tmp_path / "out"), "--datasets", str(tmp_path / "ds"),
            "--jobs", "1"]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2] == f"first commit beyond 0.05: {planted} w3: the hot loop four times over"
    counts = {line.split()[0]: int(line.split()[1].replace(",", "")) for line in out[:-2]}
    assert counts[repo.rev("main~4")] < counts[planted] < 10 * counts[repo.rev("main~4")]
    verdicts = {line.split()[0]: line.split()[-1] for line in out[:-2]}
    assert verdicts[repo.rev("main~4")] == "good" and verdicts[planted] == "bad"
    result = tmp_path / "out" / "bisect-update-ref-create-1" / planted
    assert (result / "update-ref-create-1.result.json").is_file()


def test_the_command_refuses_bad_input_in_one_line(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--git-src", str(tmp_path), "--good", "A", "--bad", "B"]
    assert main(["bisect", "packed-load", *base]) == 2
    assert capsys.readouterr().err == ("reftable-lab bisect: packed-load has no git peer "
                                       "to count (it runs no git)\n")
    assert main(["bisect", "update-ref-create-1", *base]) == 2
    assert capsys.readouterr().err == (f"reftable-lab bisect: --git-src {tmp_path}: "
                                       "not a git repository\n")
    repo, _ = wrapper_history(tmp_path / "src", find_git())
    assert main(["bisect", "update-ref-create-1", "--git-src", str(repo.path),
                 "--good", "nope", "--bad", "main"]) == 2
    assert capsys.readouterr().err == (f"reftable-lab bisect: --good nope: unknown revision "
                                       f"in {repo.path}\n")
