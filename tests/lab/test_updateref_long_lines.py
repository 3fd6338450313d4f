"""`update-ref --stdin` on very long lines, beside git: one 200 MB line (no command,
no newline) is refused with git's message and status within a bound far above its
linear cost (the line reader was quadratic: still running after 60 s; linear, about a
second), and long arguments give git's message, cut where git cuts it (4095 bytes)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gitbin import GitRunner, hermetic_env

BOUND = 120          # seconds: a guard against the quadratic reader, not a speed target


@pytest.fixture(scope="module")
def mgit(git_path: str, tmp_path_factory: pytest.TempPathFactory) -> GitRunner:
    return GitRunner(git_path, hermetic_env(tmp_path_factory.mktemp("home")))


@pytest.fixture(scope="module", params=["files", "reftable"])
def repo(request, mgit: GitRunner, tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp(f"long-{request.param}") / "repo"
    mgit.run(["init", "-q", f"--ref-format={request.param}", str(d)])
    return d


def _both(mgit: GitRunner, repo: Path, stdin: bytes) -> tuple[tuple, tuple]:
    g = mgit.run(["update-ref", "--stdin"], cwd=repo, input=stdin, check=False)
    lab = subprocess.run([sys.executable, "-m", "lab.cli", "update-ref", "--stdin"], cwd=repo,
                         input=stdin, capture_output=True, timeout=BOUND, check=False,
                         env=mgit.env)
    return (lab.returncode, lab.stdout, lab.stderr), (g.returncode, g.stdout, g.stderr)


@pytest.mark.slow
def test_one_200mb_line_is_refused_as_git(mgit: GitRunner, repo: Path) -> None:
    lab, git = _both(mgit, repo, b"x" * (200 << 20))
    assert lab == git
    assert git[0] == 128 and git[2].startswith(b"fatal: unknown command: xxx")


@pytest.mark.parametrize("line", [
    b"update refs/heads/a " + b"x" * (1 << 20) + b"\n",            # a long <new-oid>
    b"update refs/heads/" + b"y" * 5000 + b" " + b"1" * 40 + b"\n",  # a long refname
    b" " + b"z" * 10000 + b"\n",                                       # whitespace first
    b"option " + b"w" * 10000 + b"\n",                                 # an unknown option
])
def test_long_arguments_give_gits_message(mgit: GitRunner, repo: Path, line: bytes) -> None:
    lab, git = _both(mgit, repo, line)
    assert lab == git
