"""reftable_core.repo: finding the git dir, config, ref storage and object formats."""
from __future__ import annotations

from pathlib import Path

import pytest
from reftable_core.errors import NotExistError
from reftable_core.repo import find_gitdir, open_repo


@pytest.mark.parametrize("ref_format,object_format", [("reftable", "sha1"), ("files", "sha1"),
                                                      ("reftable", "sha256")])
def test_open_repo_formats(make_repo, ref_format: str, object_format: str) -> None:
    path = make_repo("r", ref_format=ref_format, object_format=object_format)
    repo = open_repo(path)
    assert repo.gitdir == str(path / ".git")
    assert repo.ref_storage == ref_format
    assert repo.object_format == object_format
    assert repo.hash_size == (32 if object_format == "sha256" else 20)
    repo.close()


def test_bare_worktree_gitfile_and_discovery(make_repo, git, tmp_path: Path) -> None:
    bare = make_repo("b", bare=True)
    assert open_repo(bare).is_bare
    wt = make_repo("w")
    (wt / "sub" / "dir").mkdir(parents=True)
    assert find_gitdir(wt / "sub" / "dir", discover=True) == str(wt / ".git")
    with pytest.raises(NotExistError):
        find_gitdir(wt / "sub")
    git.run(["commit", "-q", "--allow-empty", "-m", "x"], cwd=wt)
    git.run(["worktree", "add", "-q", str(tmp_path / "linked")], cwd=wt)
    gd = find_gitdir(tmp_path / "linked")
    assert gd.startswith(str(wt / ".git" / "worktrees"))
    linked = open_repo(tmp_path / "linked")         # a linked worktree opens, refs routed
    assert (linked.gitdir, linked.commondir) == (gd, str(wt / ".git"))
    head = linked.refs.read_ref(b"HEAD")
    assert head is not None and head.target == b"refs/heads/linked"
    resolved = linked.refs.resolve(b"HEAD")
    main_id = bytes.fromhex(git.out(["rev-parse", "main"], cwd=wt).strip().decode())
    assert resolved is not None and resolved.value == main_id
    main_head = linked.refs.read_ref(b"main-worktree/HEAD")
    assert main_head is not None and main_head.target == b"refs/heads/main"
    with pytest.raises(NotExistError):
        open_repo(tmp_path / "nowhere")
