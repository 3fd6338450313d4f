"""update-ref -d and packed-refs as git's files backend (t0600 #14, #16): packed-refs.lock
is taken for any deletion and retried for core.packedRefsTimeout; a packed-refs.new left
behind refuses the rewrite (git creates it exclusively); either way nothing changes.
Beside git on the same repository."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from gitbin import GitRunner



def _repo(git: GitRunner, d: Path) -> Path:
    """refs/x/packed packed only, refs/x/both packed and loose (another value)."""
    git.run(["init", "-q", "--ref-format=files", str(d)])
    git.run(["commit", "-q", "--allow-empty", "-m", "one"], cwd=d)
    git.run(["update-ref", "refs/x/packed", "HEAD"], cwd=d)
    git.run(["update-ref", "refs/x/both", "HEAD"], cwd=d)
    git.run(["pack-refs", "--all"], cwd=d)
    git.run(["commit", "-q", "--allow-empty", "-m", "two"], cwd=d)
    git.run(["update-ref", "refs/x/both", "HEAD"], cwd=d)
    git.run(["update-ref", "refs/x/loose", "HEAD"], cwd=d)
    return d


def _lab(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lab.cli", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, check=False)


@pytest.mark.parametrize("ref", ["refs/x/loose", "refs/x/both", "refs/x/packed"])
@pytest.mark.parametrize("left", ["packed-refs.lock", "packed-refs.new"])
def test_a_held_lock_or_a_left_new_file_refuses_as_git(git: GitRunner, tmp_path: Path,
                                                       ref: str, left: str) -> None:
    runs = []
    for who in ("git", "lab"):
        d = _repo(git, tmp_path / who)
        git.run(["config", "core.packedRefsTimeout", "0"], cwd=d)
        before = git.run(["for-each-ref"], cwd=d).stdout
        (d / ".git" / left).write_text("")
        argv = ["update-ref", "-d", ref]
        p = git.run(argv, cwd=d, check=False) if who == "git" else _lab(argv, d, git.env)
        after = git.run(["for-each-ref"], cwd=d).stdout
        err = p.stderr if isinstance(p.stderr, str) else p.stderr.decode()
        runs.append((p.returncode, err.replace(str(d), "D"), after == before))
    theirs, ours = runs
    assert ours == theirs
    if left == "packed-refs.lock" or ref != "refs/x/loose":
        assert theirs[0] != 0 and theirs[2]           # refused, nothing changed


def test_a_held_lock_is_waited_for(git: GitRunner, tmp_path: Path) -> None:
    """With core.packedRefsTimeout the delete waits for the lock (it failed at once); its
    holder lets go after a second, well inside the timeout."""
    d = _repo(git, tmp_path / "r")
    git.run(["config", "core.packedRefsTimeout", "120000"], cwd=d)
    lock = d / ".git" / "packed-refs.lock"
    lock.write_text("")
    proc = subprocess.Popen([sys.executable, "-m", "lab.cli", "update-ref", "-d", "refs/x/both"],
                            cwd=d, env=git.env, stderr=subprocess.PIPE, text=True)
    time.sleep(1)
    lock.unlink()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert git.run(["for-each-ref", "refs/x/both"], cwd=d).stdout == b""
