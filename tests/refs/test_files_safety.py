"""The files backend on hostile input: nothing outside the repository is touched,
and what git refuses is refused with git's message and exit status.

Every case builds its own repository next to an "outside" directory holding a
victim file, runs git 2.47 first where git refuses (same message, same status
expected), and hashes everything around the git dir before and after.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitbin import GitRunner
from tests.helpers.labrun import REPO_ROOT, run_lab

pytest.importorskip("reftable_core.builtin.update_ref")


class Box:
    """tmp/repo (files backend, one commit on main) and tmp/outside/victim."""

    def __init__(self, git: GitRunner, root: Path) -> None:
        self.git = git
        self.root = root
        self.work = root / "repo"
        git.run(["init", "-q", "--ref-format=files", "-b", "main", str(self.work)])
        git.run(["commit", "-q", "--allow-empty", "-m", "one"], cwd=self.work)
        self.gitdir = self.work / ".git"
        self.oid = git.run(["rev-parse", "HEAD"], cwd=self.work).stdout.decode().strip()
        (root / "outside").mkdir()
        self.victim = root / "outside" / "victim"
        self.victim.write_bytes(b"victim\n")

    def surroundings(self) -> dict[str, str]:
        """path -> content hash of every file under the tmp dir but the git dir."""
        out = {}
        for dirpath, dirnames, files in os.walk(self.root):
            if Path(dirpath) == self.work:
                dirnames[:] = [d for d in dirnames if d != ".git"]
            for f in files:
                p = os.path.join(dirpath, f)
                with open(p, "rb") as fh:
                    out[p] = hashlib.sha256(fh.read()).hexdigest()
        return out

    def git_cmd(self, *args: str) -> tuple[int, bytes, bytes]:
        p = self.git.run(["--git-dir", str(self.gitdir), *args], check=False)
        return p.returncode, p.stdout, p.stderr

    def lab(self, cmd: str, *args: str) -> tuple[int, bytes, bytes]:
        before = self.surroundings()
        rc, out, err = run_lab([cmd, "--git-dir", str(self.gitdir), *args])
        assert self.surroundings() == before, "a file outside the git dir changed"
        assert b"Traceback" not in err
        return rc, out, err


def rm_rf(path: Path) -> None:
    """Remove a tree too deep for shutil.rmtree (it recurses)."""
    subprocess.run(["rm", "-rf", str(path)], check=True)


@pytest.fixture()
def box(git: GitRunner, tmp_path: Path) -> Iterator[Box]:
    """The box; its repository is removed afterwards whatever happened (a tree
    thousands of directories deep would break pytest's recursive cleanup)."""
    b = Box(git, tmp_path)
    try:
        yield b
    finally:
        rm_rf(b.work)


def same_as_git(box: Box, cmd: str, *args: str) -> tuple[int, bytes, bytes]:
    """Run git, then the lab on the same input: same status, stdout and stderr."""
    before = box.surroundings()
    want = box.git_cmd(cmd, *args)
    assert box.surroundings() == before
    got = box.lab(cmd, *args)
    assert got == want
    return got


# -- 1. symref targets never become paths outside the git dir ----------------------

def test_head_pointing_outside_is_no_repository(box: Box) -> None:
    for target in (str(box.victim), "../../outside/victim"):
        (box.gitdir / "HEAD").write_text(f"ref: {target}\n")
        for args in (["update-ref", "HEAD", box.oid], ["update-ref", "-d", "HEAD"],
                     ["update-ref", "--no-deref", "HEAD", box.oid], ["show-ref"],
                     ["show-ref", "--head"], ["show-ref", "--verify", "HEAD"]):
            rc, _, err = same_as_git(box, *args)
            assert rc == 128 and err == f"fatal: not a git repository: '{box.gitdir}'\n".encode()
    assert box.victim.read_bytes() == b"victim\n"


def test_loose_symref_with_relative_escape_is_refused_as_git_does(box: Box) -> None:
    evil = box.gitdir / "refs" / "heads" / "evil"
    evil.write_text("ref: ../../outside/victim\n")
    rc, _, err = same_as_git(box, "update-ref", "refs/heads/evil", box.oid)
    assert rc == 128 and err == (
        b"fatal: update_ref failed for ref 'refs/heads/evil': cannot lock ref "
        b"'refs/heads/evil': unable to resolve reference '../../outside/victim': "
        b"reference broken\n")
    rc, _, err = same_as_git(box, "update-ref", "-d", "refs/heads/evil")
    assert rc == 1 and err.startswith(b"error: cannot lock ref 'refs/heads/evil': unable")
    same_as_git(box, "show-ref")
    same_as_git(box, "show-ref", "--verify", "refs/heads/evil")
    assert box.victim.read_bytes() == b"victim\n"


@pytest.mark.parametrize("where,target", [
    ("loose", "ABS"), ("loose", "refs/../../x"), ("loose", "refs/heads/../../../outside/victim"),
    ("HEAD", "refs/../../x"), ("HEAD", "refs/heads/../../../outside/victim")])
def test_unsafe_symref_target_is_refused(box: Box, where: str, target: str) -> None:
    """git 2.47 writes and unlinks through some of these (refs/../../x lands in the
    worktree): the lab refuses every one, in git's words for the case it refuses."""
    target = str(box.victim) if target == "ABS" else target
    ref = "HEAD" if where == "HEAD" else "refs/heads/evil"
    path = box.gitdir / ref
    path.write_text(f"ref: {target}\n")
    msg = (f"cannot lock ref '{ref}': unable to resolve reference '{target}': "
           "reference broken").encode()
    rc, _, err = box.lab("update-ref", ref, box.oid)
    assert (rc, err) == (128, b"fatal: update_ref failed for ref '" + ref.encode() + b"': "
                         + msg + b"\n")
    rc, _, err = box.lab("update-ref", "-d", ref)
    assert (rc, err) == (1, b"error: " + msg + b"\n")
    assert path.read_text() == f"ref: {target}\n"
    assert box.lab("show-ref", "--verify", ref) == (
        128, b"", f"fatal: '{ref}' - not a valid ref\n".encode())
    assert box.lab("show-ref")[0] == 0
    # --no-deref replaces the symref itself, as git does
    assert box.lab("update-ref", "--no-deref", ref, box.oid)[0] == 0
    assert path.read_text() == box.oid + "\n"
    assert not (box.work / "x").exists()


# -- 2. loose refs that are not regular files --------------------------------------

def test_loose_ref_symlink_to_dev_zero_stays_bounded(box: Box) -> None:
    os.symlink("/dev/zero", box.gitdir / "refs" / "heads" / "zero")
    same_as_git(box, "show-ref")                   # git skips it (not a regular file)
    # git itself runs out of memory here; the lab reads a bounded prefix: broken
    assert box.lab("show-ref", "--verify", "refs/heads/zero") == (
        128, b"", b"fatal: 'refs/heads/zero' - not a valid ref\n")


def test_huge_loose_ref_is_read_bounded(box: Box) -> None:
    big = box.gitdir / "refs" / "heads" / "big"
    with open(big, "wb") as f:
        f.write(box.oid.encode() + b"\n")
        f.truncate(64 * 1024 * 1024)               # sparse: 64 MiB of NULs after the id
    same_as_git(box, "show-ref", "--verify", "refs/heads/big")


def test_fifo_under_refs_is_skipped_without_hanging(box: Box) -> None:
    os.mkfifo(box.gitdir / "refs" / "heads" / "fifo")
    env = dict(box.git.env, PYTHONPATH=os.pathsep.join(
        [str(REPO_ROOT / "core"), str(REPO_ROOT)]))
    proc = subprocess.run([sys.executable, "-m", "lab.cli", "show-ref", "--git-dir",
                           str(box.gitdir)], capture_output=True, env=env, timeout=60)
    assert (proc.returncode, proc.stderr) == (0, b"")
    assert proc.stdout == box.git_cmd("show-ref")[1]
    # git blocks forever opening the FIFO for --verify; the lab calls it broken
    proc = subprocess.run([sys.executable, "-m", "lab.cli", "show-ref", "--git-dir",
                           str(box.gitdir), "--verify", "refs/heads/fifo"],
                          capture_output=True, env=env, timeout=60)
    assert (proc.returncode, proc.stderr) == (128, b"fatal: 'refs/heads/fifo' - not a valid ref\n")


# -- 4. names and trees too big for the file system ----------------------------------

@pytest.mark.parametrize("name", ["refs/heads/" + "a" * 4000, "refs/heads/" + "a" * 65536,
                                  "refs/heads/" + "/".join(["a"] * 3000)])
def test_overlong_refname_fails_cleanly(box: Box, name: str) -> None:
    rc, _, err = same_as_git(box, "update-ref", name, box.oid)
    assert rc == 128 and err.startswith(b"fatal: update_ref failed for ref 'refs/heads/a")
    assert len(err) == 4096                          # git's report buffer, cut as git cuts it
    rm_rf(box.gitdir / "refs" / "heads" / "a")          # git leaves its directories behind
    rc, _, err = same_as_git(box, "update-ref", "-d", name)
    assert rc == 1 and err.startswith(b"error: cannot lock ref 'refs/heads/a")
    rm_rf(box.gitdir / "refs" / "heads" / "a")
    same_as_git(box, "show-ref", "--verify", name)
    assert sorted(os.listdir(box.gitdir / "refs" / "heads")) == ["main"]


def test_ref_1200_directories_deep_is_listed(box: Box) -> None:
    fd = os.open(box.gitdir / "refs" / "heads", os.O_RDONLY)
    try:
        for _ in range(1200):
            os.mkdir("d", dir_fd=fd)
            nfd = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = nfd
        leaf = os.open("leaf", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(leaf, box.oid.encode() + b"\n")
        os.close(leaf)
    finally:
        os.close(fd)
    rc, out, _ = same_as_git(box, "show-ref")
    assert rc == 0 and out.count(b"\n") == 2
    rm_rf(box.gitdir / "refs" / "heads" / "d")
