"""Messages name the repository's files as git does (".git/packed-refs" from a
discovered worktree, "./packed-refs" from inside the git dir, --git-dir as given), and
a delete over a packed-refs file git refuses dies as git does (fatal:, 128; it was
error:, 1). Each case beside git 2.45+ on the same repository."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gitbin import GitRunner, hermetic_env


@pytest.fixture()
def mgit(git_path: str, tmp_path: Path) -> GitRunner:
    return GitRunner(git_path, hermetic_env(tmp_path / "home"))


@pytest.fixture()
def repo(mgit: GitRunner, tmp_path: Path) -> Path:
    """A files repository whose packed-refs starts with a peeled line (no ref before)."""
    d = tmp_path / "repo"
    mgit.run(["init", "-q", "--ref-format=files", str(d)])
    mgit.run(["commit", "-q", "--allow-empty", "-m", "x"], cwd=d)
    mgit.run(["branch", "keep"], cwd=d)
    mgit.run(["pack-refs", "--all"], cwd=d)
    oid = mgit.run(["rev-parse", "HEAD"], cwd=d).stdout.strip()
    packed = d / ".git" / "packed-refs"
    lines = packed.read_text().splitlines(keepends=True)
    packed.write_text(lines[0] + f"^{oid}\n" + "".join(lines[1:]))
    return d


@pytest.mark.parametrize("argv, stdin", [
    (["update-ref", "-d", "refs/heads/keep"], b""),
    (["update-ref", "--stdin"], b"delete refs/heads/keep\n"),
    (["show-ref"], b""),
])
@pytest.mark.parametrize("where", ["worktree", "gitdir", "given"])
def test_a_bad_packed_refs_line_as_git(mgit: GitRunner, repo: Path, argv: list[str],
                                       stdin: bytes, where: str) -> None:
    cwd = repo / ".git" if where == "gitdir" else repo
    gargv, largv = argv, argv
    if where == "given":                # git's global option; the lab's after the command
        gargv = ["--git-dir", str(repo / ".git"), *argv]
        largv = [argv[0], "--git-dir", str(repo / ".git"), *argv[1:]]
    g = mgit.run(gargv, cwd=cwd, input=stdin, check=False)
    lab = subprocess.run([sys.executable, "-m", "lab.cli", *largv], cwd=cwd, input=stdin,
                         capture_output=True, env=mgit.env, check=False)
    assert (lab.returncode, lab.stdout, lab.stderr) == (g.returncode, g.stdout, g.stderr)
    assert g.returncode == 128 and b"unexpected line in " in g.stderr
