"""update-ref over what is in a loose ref's way, beside git (t0600 #10-#13, #32): a
non-empty directory and a broken loose ref block a create with git's words (both were
overwritten, or failed later as "couldn't set"); with core.preferSymlinkRefs a symref is
written as a symbolic link."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitbin import GitRunner, hermetic_env


@pytest.fixture()
def mgit(git_path: str, tmp_path: Path) -> GitRunner:
    return GitRunner(git_path, hermetic_env(tmp_path / "home"))


def _repo(mgit: GitRunner, d: Path) -> Path:
    mgit.run(["init", "-q", "--ref-format=files", str(d)])
    mgit.run(["commit", "-q", "--allow-empty", "-m", "one"], cwd=d)
    return d


def _run(mgit: GitRunner, who: str, argv: list[str], d: Path, stdin: bytes) -> tuple:
    cmd = [mgit.git, *argv] if who == "git" else [sys.executable, "-m", "lab.cli", *argv]
    p = subprocess.run(cmd, cwd=d, input=stdin, capture_output=True, env=mgit.env, check=False)
    return p.returncode, p.stdout, p.stderr


@pytest.mark.parametrize("blocker", ["directory", "broken"])
@pytest.mark.parametrize("line", ["update refs/b/foo HEAD\n", "update refs/b/foo HEAD HEAD\n"])
def test_what_blocks_a_create_as_git(mgit: GitRunner, tmp_path: Path, blocker: str,
                                     line: str) -> None:
    seen = []
    for who in ("git", "lab"):
        d = _repo(mgit, tmp_path / who)
        refs = d / ".git" / "refs" / "b"
        if blocker == "directory":
            (refs / "foo" / "bar").mkdir(parents=True)
            (refs / "foo" / "bar" / "baz.lock").write_text("")
        else:
            refs.mkdir(parents=True)
            (refs / "foo").write_text("gobbledigook\n")
        seen.append(_run(mgit, who, ["update-ref", "--stdin"], d, line.encode()))
    git, lab = seen
    assert lab == git and git[0] == 128


def test_prefer_symlink_refs_writes_a_symlink(mgit: GitRunner, tmp_path: Path) -> None:
    for who in ("git", "lab"):
        d = _repo(mgit, tmp_path / who)
        mgit.run(["config", "core.preferSymlinkRefs", "true"], cwd=d)
        stdin = b"start\nsymref-create TEST_SYMREF_HEAD refs/heads/main\nprepare\ncommit\n"
        rc, out, err = _run(mgit, who, ["update-ref", "--no-deref", "--stdin"], d, stdin)
        assert rc == 0, err
        link = d / ".git" / "TEST_SYMREF_HEAD"
        assert link.is_symlink() and os.readlink(link) == "refs/heads/main", who
        assert not (d / ".git" / "TEST_SYMREF_HEAD.lock").exists()
