"""scripts/git-perf.sh's pieces that need no long run: the table from t/perf's result
files (lab/gitperf.py) and the router's choice (scripts/git-router.sh)."""
import os
import subprocess
from pathlib import Path

import pytest

from lab import gitperf

ROOT = Path(__file__).resolve().parents[2]


def _results(tmp_path, prefix, script, times):
    """Writes t/perf's files for one run: .subtests, .descr, <prefix>....result."""
    d = tmp_path / "test-results"
    d.mkdir(exist_ok=True)
    (d / f"{script}.subtests").write_text("".join(f"{n}\n" for n in times))
    for n, (title, line) in times.items():
        (d / f"{script}.{n}.descr").write_text(title + "\n")
        (d / f"{prefix}{script}.{n}.result").write_text(line + "\n")
    return d


def test_parse_time_reads_min_time_lines():
    assert gitperf.parse_time("0:01.50 1.20 0.10") == (1.5, 1.2, 0.1)
    assert gitperf.parse_time("1:02:03.25 0.5 0.25") == (3723.25, 0.5, 0.25)
    with pytest.raises(ValueError):
        gitperf.parse_time("garbage")


def test_results_prefix_is_run_s():
    # t/perf/run: bindir$(cd DIR && pwd | tr -c '[a-zA-Z0-9]' _).
    assert gitperf.results_prefix("/a/b-c.d") == "bindir_a_b_c_d."


def test_table_pairs_git_and_lab_by_test(tmp_path):
    gp, lp = gitperf.results_prefix("/g"), gitperf.results_prefix("/l")
    _results(tmp_path, gp, "p1400-update-ref", {1: ("update-ref", "0:00.40 0.3 0.1"),
                                                2: ("update-ref --stdin", "0:00.10 0.05 0.05")})
    d = _results(tmp_path, lp, "p1400-update-ref", {1: ("update-ref", "0:02.00 1.5 0.4"),
                                                    2: ("update-ref --stdin", "0:00.35 0.3 0.05")})
    rows = gitperf.table(d, ["p1400-update-ref"], gp, lp)
    assert [(r.test, r.title) for r in rows] == [("p1400-update-ref.1", "update-ref"),
                                                  ("p1400-update-ref.2", "update-ref --stdin")]
    assert rows[0].git == 0.4 and rows[0].lab == 2.0
    assert rows[0].ratio == pytest.approx(5.0) and rows[1].ratio == pytest.approx(3.5)
    text = gitperf.render(rows)
    assert "| p1400-update-ref.1 | update-ref | 0.40 | 2.00 | 5.00 |" in text


def test_a_missing_result_is_said_not_invented(tmp_path):
    gp, lp = gitperf.results_prefix("/g"), gitperf.results_prefix("/l")
    _results(tmp_path, gp, "p6300-for-each-ref", {1: ("for-each-ref", "0:00.20 0.1 0.1")})
    d = tmp_path / "test-results"
    rows = gitperf.table(d, ["p6300-for-each-ref"], gp, lp)
    assert rows[0].lab is None and rows[0].ratio is None
    assert "| p6300-for-each-ref.1 | for-each-ref | 0.20 | - | - |" in gitperf.render(rows)


def _router(tmp_path, commands=None):
    for name in ("lab", "real"):
        p = tmp_path / name
        p.write_text(f'#!/bin/sh\necho {name} "$@"\n')
        p.chmod(0o755)
    env = dict(os.environ)
    env.pop("GIT_ROUTER_COMMANDS", None)
    if commands:
        env["GIT_ROUTER_COMMANDS"] = commands
    subprocess.run(["bash", "-c", f'. {ROOT}/scripts/git-router.sh && write_git_router '
                    f'"$0" {tmp_path}/lab {tmp_path}/real', str(tmp_path / "git")],
                   check=True, env=env)
    return tmp_path / "git"


@pytest.mark.parametrize("argv, to", [
    (["for-each-ref", "--format=%(refname)"], "lab"),
    (["-C", "repo", "update-ref", "-d", "refs/heads/x"], "lab"),
    (["-c", "core.x=1", "show-ref"], "lab"),
    (["--git-dir=.git", "refs", "migrate"], "lab"),
    (["cat-file", "--batch-check"], "real"),
    (["-C", "for-each-ref", "log"], "real"),          # -C's value is not the command
    (["fast-import", "for-each-ref"], "real"),        # the first word decides
    (["--exec-path"], "real"),
])
def test_router_sends_the_swapped_commands_to_the_lab(tmp_path, argv, to):
    out = subprocess.run([str(_router(tmp_path)), *argv], capture_output=True, text=True,
                         check=True).stdout
    assert out == " ".join([to, *argv]) + "\n"


def test_router_commands_can_be_chosen(tmp_path):
    git = _router(tmp_path, commands="update-ref")
    run = lambda *a: subprocess.run([str(git), *a], capture_output=True, text=True).stdout
    assert run("update-ref", "x").startswith("lab ")
    assert run("for-each-ref").startswith("real ")
