"""Messages name the repository's files as git does (".git/packed-refs" from a
discovered worktree, "./packed-refs" from inside the git dir, --git-dir as given), and
a delete over a packed-refs file git refuses dies as git does (fatal:, 128; it was
error:, 1). Each case beside git 2.45+ on the same repository."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gitbin import GitRunner



@pytest.fixture()
def repo(git: GitRunner, tmp_path: Path) -> Path:
    """A files repository whose packed-refs starts with a peeled line (no ref before)."""
    d = tmp_path / "repo"
    git.run(["init", "-q", "--ref-format=files", str(d)])
    git.run(["commit", "-q", "--allow-empty", "-m", "x"], cwd=d)
    git.run(["branch", "keep"], cwd=d)
    git.run(["pack-refs", "--all"], cwd=d)
    oid = git.run(["rev-parse", "HEAD"], cwd=d).stdout.strip()
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
def test_a_bad_packed_refs_line_as_git(git: GitRunner, repo: Path, argv: list[str],
                                       stdin: bytes, where: str) -> None:
    cwd = repo / ".git" if where == "gitdir" else repo
    gargv, largv = argv, argv
    if where == "given":                # git's global option; the lab's after the command
        gargv = ["--git-dir", str(repo / ".git"), *argv]
        largv = [argv[0], "--git-dir", str(repo / ".git"), *argv[1:]]
    g = git.run(gargv, cwd=cwd, input=stdin, check=False)
    lab = subprocess.run([sys.executable, "-m", "lab.cli", *largv], cwd=cwd, input=stdin,
                         capture_output=True, env=git.env, check=False)
    assert (lab.returncode, lab.stdout, lab.stderr) == (g.returncode, g.stdout, g.stderr)
    assert g.returncode == 128 and b"unexpected line in " in g.stderr
