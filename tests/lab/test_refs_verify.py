"""`reftable-lab refs verify` beside git 2.47's: the files under refs/ walked in
directory order, bad names and file types reported by git's words and fsck.<id>
severities, --verbose's lines, the exit status; nothing on a reftable store."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from gitbin import GitRunner
from tests.helpers.labrun import run_lab_proc

BAD = ["heads/.bad", "tags/x/@", "tags/ok.lock", "tags/.lock", "heads/a/b/c", "heads/ok",
       "heads/@", "heads/sp ace", "heads/x..y", "heads/ünï"]
RUNS = [["refs", "verify"], ["refs", "verify", "--verbose"], ["refs", "verify", "--strict"],
        ["refs", "verify", "extra"], ["refs", "verify", "-h"], ["refs", "verify", "--bogus"],
        ["-c", "fsck.badRefName=warn", "refs", "verify", "--verbose"],
        ["-c", "fsck.badRefName=ignore", "refs", "verify"],
        ["-c", "fsck.badRefFiletype=warn", "refs", "verify"],
        ["-c", "fsck.bogus=warn", "refs", "verify"],
        ["-c", "fsck.badRefName=whatever", "refs", "verify"],
        ["-c", "fsck.nulInHeader=warn", "refs", "verify"]]


@pytest.fixture(params=["files", "reftable"])
def repo(request: pytest.FixtureRequest, make_repo, git: GitRunner) -> Path:
    path = make_repo("v", ref_format=request.param)
    git.run(["commit", "-q", "--allow-empty", "-m", "one"], cwd=path)
    oid = git.out(["rev-parse", "HEAD"], cwd=path).strip() + b"\n"
    refs = path / ".git" / "refs"
    if request.param == "reftable":             # refs/heads is a file there: no walk
        return path
    for name in BAD:
        (refs / name).parent.mkdir(parents=True, exist_ok=True)
        (refs / name).write_bytes(oid)
    os.mkfifo(refs / "heads" / "fifo")
    (refs / "heads" / "link").symlink_to("nowhere")
    return path


@pytest.mark.parametrize("args", RUNS, ids=lambda a: " ".join(a))
def test_refs_verify_as_git(repo: Path, git: GitRunner, args: list[str]) -> None:
    theirs = git.run(args, cwd=repo, check=False)
    ours = run_lab_proc(args, cwd=repo, env=git.env)
    assert ours == (theirs.returncode, theirs.stdout, theirs.stderr)
