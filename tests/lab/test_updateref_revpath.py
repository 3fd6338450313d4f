"""`<rev>:<path>` as a value in `reftable-lab update-ref` (git's get_tree_entry).

A blob or tree named by a path in a commit's (or tree's) tree, from the command
line and from --stdin (text and -z), in both ref formats: the lab's status,
stdout and stderr are git's, and the ref it writes holds the id git writes.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gitbin import GitRunner
from tests.helpers.labrun import run_lab

FORMATS = ["files", "reftable"]


@pytest.fixture(params=FORMATS)
def repo(request: pytest.FixtureRequest, make_repo, git: GitRunner) -> Path:
    path = make_repo("r", ref_format=request.param)
    (path / "dir" / "sub dir").mkdir(parents=True)
    (path / "path with space").write_text("a\n")
    (path / "dir" / "sub dir" / "f").write_text("b\n")
    git.run(["add", "."], cwd=path)
    git.run(["commit", "-q", "-m", "one"], cwd=path)
    git.run(["tag", "-a", "-m", "t", "v1"], cwd=path)
    return path


def _same(git: GitRunner, repo: Path, args: list[str], stdin: bytes = b"") -> None:
    """args run by the lab in repo and by git in a copy of it: same output, same refs."""
    twin = repo.with_name(repo.name + "-git")
    shutil.rmtree(twin, ignore_errors=True)
    shutil.copytree(repo, twin, symlinks=True)
    got = run_lab(args, cwd=repo, stdin=stdin)
    p = git.run(args, cwd=twin, input=stdin, check=False)
    assert got == (p.returncode, p.stdout, p.stderr), args
    refs = ["for-each-ref", "refs/blobs/"]
    assert git.out(refs, cwd=repo) == git.out(refs, cwd=twin), args


@pytest.mark.parametrize("value", [
    "main:path with space", "HEAD:dir/sub dir/f", "v1:dir", "HEAD:", "HEAD^{tree}:dir/sub dir",
    "main~0:dir//sub dir", "main~0:dir/sub dir/", "HEAD:path with space/",
    "HEAD:/dir", "HEAD://", "main:nope", "main:path with space/x", "HEAD:dir/x", ":dir",
    "nope:dir", "main^{tree}:",
])
def test_rev_path_as_new_value(git: GitRunner, repo: Path, value: str) -> None:
    _same(git, repo, ["update-ref", "refs/blobs/x", value])
    _same(git, repo, ["update-ref", "--stdin"], f'create refs/blobs/q "{value}"\n'.encode())
    _same(git, repo, ["update-ref", "-z", "--stdin"],
          b"create refs/blobs/z\0" + value.encode() + b"\0")


def test_rev_path_as_old_value(git: GitRunner, repo: Path) -> None:
    git.run(["update-ref", "refs/blobs/o", "HEAD:path with space"], cwd=repo)
    _same(git, repo, ["update-ref", "refs/blobs/o", "HEAD:dir", "HEAD:path with space"])
