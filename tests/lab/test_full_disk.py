"""A full disk (ENOSPC) under update-ref, both formats: every write of the repository
fails as a full file system fails it (fault-injected in the lab's process: the table
file's writes and the lock files' os.write). The lab prints one line and git's status,
never a traceback, and no committed ref changes (git's reftable words: "fatal:
reftable: transaction failure: general error", 128)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from gitbin import GitRunner, hermetic_env

FULL_DISK = r"""
import errno, os, sys
def full(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
class Full:
    def __init__(self, f): self.f = f
    def write(self, data): full()
    def __getattr__(self, name): return getattr(self.f, name)
    def __enter__(self): return self
    def __exit__(self, *exc): self.f.close()
real_fdopen = os.fdopen
os.fdopen = lambda fd, *a, **k: Full(real_fdopen(fd, *a, **k))
os.write = full
from lab.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.fixture(scope="module")
def mgit(git_path: str, tmp_path_factory: pytest.TempPathFactory) -> GitRunner:
    return GitRunner(git_path, hermetic_env(tmp_path_factory.mktemp("home")))


@pytest.fixture(params=["files", "reftable"])
def repo(request: pytest.FixtureRequest, mgit: GitRunner, tmp_path: Path) -> Path:
    d = tmp_path / "repo"
    mgit.run(["init", "-q", f"--ref-format={request.param}", str(d)])
    (d / "a").write_text("a\n")
    mgit.run(["add", "a"], cwd=d)
    mgit.run(["commit", "-q", "-m", "one"], cwd=d)
    mgit.run(["branch", "keep"], cwd=d)
    mgit.run(["commit", "-q", "--allow-empty", "-m", "two"], cwd=d)
    if request.param == "files":        # a delete then rewrites packed-refs
        mgit.run(["pack-refs", "--all"], cwd=d)
    return d


NO_SPACE = "No space left on device"
# git's words, by format and command (refs/files-backend.c, refs/packed-backend.c,
# reftable/error.c's "general error" for a write callback's -1)
WORDS = {
    ("files", "stdin"): (128, r"fatal: cannot update the ref 'refs/heads/new': unable to "
                              rf"append to '.*/logs/refs/heads/new': {NO_SPACE}"),
    ("files", "update"): (128, r"fatal: update_ref failed for ref 'refs/heads/keep': "
                               r"cannot update the ref 'refs/heads/keep': unable to append "
                               rf"to '.*/logs/refs/heads/keep': {NO_SPACE}"),
    ("files", "delete"): (1, rf"error: error writing to .*packed-refs\.new: {NO_SPACE}"),
    ("reftable", "stdin"): (128, "fatal: reftable: transaction failure: general error"),
    ("reftable", "update"): (128, "fatal: update_ref failed for ref 'refs/heads/keep': "
                                  "reftable: transaction failure: general error"),
    ("reftable", "delete"): (1, "error: reftable: transaction failure: general error"),
}


@pytest.mark.parametrize("command, argv, stdin", [
    ("stdin", ["update-ref", "--stdin"], b"create refs/heads/new HEAD\n"),
    ("update", ["update-ref", "refs/heads/keep", "HEAD"], b""),
    ("delete", ["update-ref", "-d", "refs/heads/keep"], b""),
])
def test_a_full_disk_is_one_line_and_loses_nothing(mgit: GitRunner, repo: Path, command: str,
                                                   argv: list[str], stdin: bytes) -> None:
    before = mgit.run(["show-ref"], cwd=repo).stdout
    proc = subprocess.run([sys.executable, "-c", FULL_DISK, *argv], cwd=repo, input=stdin,
                          capture_output=True, env=mgit.env, check=False)
    err = proc.stderr.decode()
    assert proc.returncode in (1, 128) and "Traceback" not in err, err
    reftable = repo / ".git" / "reftable"
    status, words = WORDS[("reftable" if reftable.is_dir() else "files", command)]
    assert proc.returncode == status and re.fullmatch(words + "\n", err), err
    assert mgit.run(["show-ref"], cwd=repo).stdout == before
    assert mgit.run(["fsck", "--no-progress"], cwd=repo, check=False).returncode == 0
    if reftable.is_dir():                     # no temporary table left behind
        listed = set((reftable / "tables.list").read_text().split())
        assert {p.name for p in reftable.iterdir()} == listed | {"tables.list"}
