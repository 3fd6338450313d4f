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

from gitbin import GitRunner



def _repo(git: GitRunner, d: Path) -> Path:
    git.run(["init", "-q", "--ref-format=files", str(d)])
    git.run(["commit", "-q", "--allow-empty", "-m", "one"], cwd=d)
    return d


def _run(git: GitRunner, who: str, argv: list[str], d: Path, stdin: bytes) -> tuple:
    cmd = [git.git, *argv] if who == "git" else [sys.executable, "-m", "lab.cli", *argv]
    p = subprocess.run(cmd, cwd=d, input=stdin, capture_output=True, env=git.env, check=False)
    return p.returncode, p.stdout, p.stderr


@pytest.mark.parametrize("blocker", ["directory", "broken"])
@pytest.mark.parametrize("line", ["update refs/b/foo HEAD\n", "update refs/b/foo HEAD HEAD\n",
                                  "delete refs/b/foo\n", "verify refs/b/foo\n"])
def test_what_blocks_a_create_as_git(git: GitRunner, tmp_path: Path, blocker: str,
                                     line: str) -> None:
    seen = []
    for who in ("git", "lab"):
        d = _repo(git, tmp_path / who)
        refs = d / ".git" / "refs" / "b"
        if blocker == "directory":
            (refs / "foo" / "bar").mkdir(parents=True)
            (refs / "foo" / "bar" / "baz.lock").write_text("")
        else:
            refs.mkdir(parents=True)
            (refs / "foo").write_text("gobbledigook\n")
        seen.append(_run(git, who, ["update-ref", "--stdin"], d, line.encode()))
    theirs, ours = seen
    assert ours == theirs and theirs[0] == 128


LONG = "a" * 300


@pytest.mark.parametrize("blocker", ["junk", "dangling", "long", "ref"])
@pytest.mark.parametrize("line", ["create refs/b/foo/x HEAD\n", "delete refs/b/foo/x\n",
                                  "update refs/b/foo/x HEAD HEAD\n"])
def test_what_blocks_a_locks_directories_as_git(git: GitRunner, tmp_path: Path, blocker: str,
                                                line: str) -> None:
    """git's safe_create_leading_directories under lock_raw_ref: a file in the way that
    is not a ref (junk) is named as in the way, not as a ref that exists; a dangling
    symlink or a name too long fails to make the directory, named so (the lab printed a
    D/F conflict or the lock file's error for all three)."""
    seen = []
    for who in ("git", "lab"):
        d = _repo(git, tmp_path / who)
        refs = d / ".git" / "refs" / "b"
        refs.mkdir(parents=True)
        if blocker == "junk":
            (refs / "foo").write_text("gobbledigook\n")
        elif blocker == "dangling":
            (refs / "foo").symlink_to("nowhere")
        elif blocker == "ref":
            git.run(["update-ref", "refs/b/foo", "HEAD"], cwd=d)
        text = line.replace("foo", LONG) if blocker == "long" else line
        seen.append(_run(git, who, ["update-ref", "--stdin"], d, text.encode()))
    theirs, ours = seen
    assert ours == theirs and theirs[0] == 128


def test_prefer_symlink_refs_writes_a_symlink(git: GitRunner, tmp_path: Path) -> None:
    for who in ("git", "lab"):
        d = _repo(git, tmp_path / who)
        git.run(["config", "core.preferSymlinkRefs", "true"], cwd=d)
        stdin = b"start\nsymref-create TEST_SYMREF_HEAD refs/heads/main\nprepare\ncommit\n"
        rc, out, err = _run(git, who, ["update-ref", "--no-deref", "--stdin"], d, stdin)
        assert rc == 0, err
        link = d / ".git" / "TEST_SYMREF_HEAD"
        assert link.is_symlink() and os.readlink(link) == "refs/heads/main", who
        assert not (d / ".git" / "TEST_SYMREF_HEAD.lock").exists()
